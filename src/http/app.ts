import cors from '@fastify/cors';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { AppContext } from '../kernel/context.types.ts';
import type { ModuleName } from '../kernel/module-state.ts';
import { documentation, type LoadedModule, loadModules } from '../kernel/registry.ts';
import { authenticateKey, looksLikeKey } from '../modules/api-keys/index.ts';
import { installRequestMetrics } from '../modules/core/metrics.ts';
import { authenticateOwnApiToken, isOwnApiToken } from '../modules/oauth/index.ts';
import { ApiError } from '../platform/api-error.ts';
import { recordRoutes } from '../platform/log-url.ts';
import { lazyChildLogger } from '../platform/logger.ts';
import { VERSION } from '../platform/version.ts';
import { registerDocs } from './docs.ts';
import { type Endpoint, scopeOf } from './endpoint.ts';
import { installErrorHandlers } from './errors.ts';
import { FORM_POST_ROUTES, formFields } from './form-body.ts';
import { createAuthenticator, guardFor } from './guard.ts';
import { clientErrorHandler, frameworkErrorHandler } from './http-errors.ts';
import { IndexResponse } from './index.schemas.ts';
import { parseJsonBody } from './json-body.ts';
import { registerLoadShedding } from './load-shedding.ts';
import { installBrowserSession } from './pages/browser-session.ts';
import { createAddressWarning, installPublicOrigin } from './pages/public-origin.ts';
import { ProblemSchema } from './problem.schemas.ts';
import { forwardedWithoutTrust } from './proxy-warning.ts';
import { requestIdFor } from './request-id.ts';
import { securityHeaders } from './security-headers.ts';
import { sharedSerializerFactory } from './serializers.ts';
import { createValidatorCompiler, refuseNulCharacters } from './validation.ts';

const BODY_LIMIT = 64 * 1024;
// A JSON API's set (OWASP REST Security Cheat Sheet). helmet's defaults are for HTML pages: their
// CSP directives (script-src 'self', style-src … 'unsafe-inline', …) loosened `default-src 'none'`,
// and six other headers (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control,
// X-Download-Options, X-Permitted-Cross-Domain-Policies, X-XSS-Protection) govern documents, which
// Gatehouse never serves outside /docs. Referrer-Policy stays: a link followed from /docs or an
// error page must not leak a URL.
const SECURITY_HEADERS = securityHeaders({
  // The strictest policy; /docs loosens it for its own page only.
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  crossOriginResourcePolicy: { policy: 'same-site' },
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: { policy: 'no-referrer' },
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** Builds the Fastify app on a context: plugins, every module's endpoints, the index. Never listens. */
export async function buildApp(ctx: AppContext, loaded?: LoadedModule[]): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: ctx.config.trustProxy,
    genReqId: requestIdFor,
    requestIdHeader: false,
    // Slow clients (REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS): a request must arrive whole, and its
    // headers, within these; otherwise clientErrorHandler answers and the connection is closed.
    requestTimeout: ctx.config.requestTimeoutMs,
    // Node checks those deadlines on a timer (30 s by default), so a trickling client could outlive
    // them by that much; check at least every second.
    http: { connectionsCheckingInterval: Math.min(1000, Math.ceil(ctx.config.headersTimeoutMs / 4)) },
    connectionTimeout: 60_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // Two log lines per request were most of a /health request's cost: errors and refusals are
    // logged by the error handler, and LOG_LEVEL=debug adds one line per request (below).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, options) =>
      lazyChildLogger(logger, bindings, options) as FastifyBaseLogger,
    routerOptions: { maxParamLength: 512, ignoreTrailingSlash: false },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    ajv: { customOptions: {} },
    // One compiled serializer per response schema object, not per route (src/http/serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: sharedSerializerFactory() } },
  });
  app.server.headersTimeout = ctx.config.headersTimeoutMs;
  // Before any route: the patterns, for the log test's sweep of every token route (src/platform/log-url.ts).
  recordRoutes(app);

  app.setValidatorCompiler(createValidatorCompiler());
  app.removeContentTypeParser(['text/plain', 'application/json']);
  // docs/api.md §23: SCIM clients (Entra ID, Okta) send `application/scim+json` (RFC 7644 §3.1).
  app.addContentTypeParser(
    ['application/json', 'application/scim+json'],
    { parseAs: 'string' },
    (_req, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (err) {
        done(err as Error, undefined);
      }
    },
  );
  // The form bodies Gatehouse reads: a provider's `form_post` answer at its callback (docs/api.md §18)
  // and a SAML response at an assertion consumer service (§23). Every other route refuses it with 415.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    if (!FORM_POST_ROUTES.has(req.routeOptions.url ?? '')) {
      done(
        new ApiError('unsupported_media_type', {
          detail: 'Requests with a body must send Content-Type: application/json',
        }),
        undefined,
      );
      return;
    }
    try {
      done(null, formFields(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.decorateRequest('auth', null);
  // TRUST_PROXY=false with a proxy in front: one warning, at the first forwarded request.
  const forwarded = forwardedWithoutTrust(ctx);
  // The request id and security headers first, so that a shed request carries them too.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS).header('x-request-id', request.id);
    forwarded?.(request);
    done();
  });
  await registerLoadShedding(app, ctx.config);
  installRequestMetrics(app, ctx);
  if (ctx.log.isLevelEnabled('debug')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.debug({ req: request, res: reply, ms: reply.elapsedTime }, 'request completed');
      done();
    });
  }
  const allowedOrigins = new Set(ctx.config.corsOrigins);
  // Without CORS_ORIGINS no browser origin is allowed: the plugin (a hook on every request) stays out.
  if (allowedOrigins.size > 0)
    await app.register(cors, {
      // Only listed origins get CORS headers; for any other request (no Origin, another origin) CORS
      // stays off, so an OPTIONS there is an ordinary 404/405 problem instead of a bare 204.
      origin: (origin, cb) => cb(null, origin !== undefined && allowedOrigins.has(origin)),
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'x-request-id'],
      // An allowed origin's OPTIONS without Access-Control-Request-Method gets 204 rather than
      // @fastify/cors's text/plain 400.
      strictPreflight: false,
      maxAge: 600,
      credentials: false,
      exposedHeaders: ['x-request-id', 'retry-after', 'location', 'www-authenticate'],
    });

  await registerDocs(app, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Gatehouse', version: VERSION, description: 'User and access service — API v1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    // Operations are tagged with their module: a disabled module's endpoints are not listed.
    isListed: (tag) => ctx.modules.isEnabled(tag as ModuleName),
  });

  // Cookie mode for the hosted pages' token routes (docs/pages.md); hooks added as routes are.
  // One warning per app that people reach it at another address than PUBLIC_URL, whichever hook sees it first.
  const warnAddress = createAddressWarning(ctx);
  installBrowserSession(app, ctx, warnAddress);
  // A page opened on another loopback name than PUBLIC_URL's goes there (docs/pages.md, "One address").
  installPublicOrigin(app, ctx, warnAddress);
  const modules = loaded ?? loadModules(ctx);
  const allEndpoints = modules.flatMap((m) => m.endpoints.map((e) => ({ module: m.info.name, endpoint: e })));
  const routeTable = allEndpoints.map(({ endpoint: e }) => ({
    method: e.method,
    pattern: pathPattern(e.path),
  }));
  // The index answers at `/` and `/api/v1` exactly (no trailing slash, like every other path).
  routeTable.push({ method: 'GET', pattern: /^\/$/ }, { method: 'GET', pattern: /^\/api\/v1$/ });
  installErrorHandlers(app, (path) => allowedMethods(routeTable, path));

  const authenticate = createAuthenticator(ctx.accessTokens, ctx.sessions, ctx.config.requireMfa);
  // API keys (docs/api.md §22): the same guard, the scope from each endpoint's declaration.
  const keyAuthenticator = {
    claims: looksLikeKey,
    authenticate: (token: string) => authenticateKey(ctx, token),
  };
  // OAuth clients' tokens for Gatehouse's own API, on the endpoints that declare `oauthClients`.
  const clientAuthenticator = {
    claims: (token: string) => isOwnApiToken(ctx, token),
    authenticate: (token: string) => authenticateOwnApiToken(ctx, token),
  };
  for (const { module, endpoint } of allEndpoints) {
    // One callback hook per route (the module switch, then the access guard): it runs on every
    // request, and each hook Fastify walks and each promise costs.
    const keys =
      endpoint.apiKeys === 'unrecognized'
        ? null
        : {
            authenticator: keyAuthenticator,
            rule: { scope: scopeOf(endpoint), refused: endpoint.apiKeys === 'refused' },
          };
    const guard =
      endpoint.access === 'public'
        ? null
        : guardFor(
            endpoint.access,
            authenticate,
            endpoint.enrollment,
            keys,
            endpoint.oauthClients ? clientAuthenticator : null,
          );
    const disabled = `The ${module} module is disabled`;
    const noStore = endpoint.access !== 'public' || endpoint.issuesTokens === true;
    const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      if (noStore) reply.header('cache-control', 'no-store');
      if (!ctx.modules.isEnabled(module)) done(new ApiError('module_disabled', { detail: disabled }));
      else if (guard === null) done();
      else guard(request, reply, done);
    };
    if (endpoint.raw === true) {
      app.route({
        method: endpoint.method,
        url: endpoint.path,
        schema: { ...openApiSchema(module, endpoint), hide: endpoint.hidden === true },
        onRequest: rawHandoff(module, endpoint, (name) => ctx.modules.isEnabled(name)),
        handler: () => undefined,
      });
      continue;
    }
    // Only where a query or a body is read: a route that reads neither has nothing to refuse.
    const readsInput = 'body' in endpoint.schema || 'querystring' in endpoint.schema;
    app.route({
      method: endpoint.method,
      url: endpoint.path,
      schema: openApiSchema(module, endpoint),
      onRequest,
      ...(readsInput ? { preValidation: nulRefusal } : {}),
      handler: endpoint.handler as (req: FastifyRequest) => unknown,
    });
  }

  const index = async () => ({
    message: 'Gatehouse user and access service',
    status: 'running' as const,
    version: 'v1' as const,
    documentation: documentation(modules, (name) => ctx.modules.isEnabled(name)),
  });
  const indexSchema = {
    summary: 'Service index: the enabled endpoints',
    tags: ['core'],
    response: { 200: IndexResponse },
  };
  app.get('/', { schema: indexSchema }, index);
  app.get('/api/v1', { schema: { ...indexSchema, hide: true } }, index);

  return app;
}

/**
 * The `onRequest` of a raw endpoint: the module switch, then the handler answers on the raw
 * response. `done` is called only on a refusal or a failure before the handoff, so Fastify never
 * reads the body nor runs the route's own handler.
 */
function rawHandoff(module: ModuleName, endpoint: Endpoint, isEnabled: (name: ModuleName) => boolean) {
  const disabled = `The ${module} module is disabled`;
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (!isEnabled(module)) {
      done(new ApiError('module_disabled', { detail: disabled }));
      return;
    }
    Promise.resolve(endpoint.handler(request as never, reply as never)).catch((err: unknown) => {
      if (!reply.sent) done(err as Error);
      else request.log.error({ err }, 'raw endpoint failed after its handoff');
    });
  };
}

// A callback hook: it needs no promise.
function nulRefusal(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  try {
    refuseNulCharacters(request);
    done();
  } catch (err) {
    done(err as Error);
  }
}

function openApiSchema(module: string, e: Endpoint) {
  return {
    ...e.schema,
    // Every error leaves as problem+json; documenting it once per endpoint keeps OpenAPI complete.
    response: { '4xx': ProblemSchema, '5xx': ProblemSchema, ...(e.schema.response as object) },
    summary: e.summary,
    tags: [module],
    operationId: `${e.group}.${e.label}`,
    ...(e.access === 'public' ? {} : { security: [{ bearer: [] }] }),
  };
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The methods a path answers to, for 405's `Allow` (HEAD wherever GET is: Fastify serves both). */
function allowedMethods(table: Array<{ method: string; pattern: RegExp }>, path: string): string[] {
  const methods = new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  return METHOD_ORDER.filter((m) => methods.has(m));
}

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
