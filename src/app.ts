import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type onRequestAsyncHookHandler,
  type onRequestHookHandler,
} from 'fastify';
import type { AppContext } from './context.ts';
import { ApiError, installErrorHandlers } from './errors.ts';
import { IndexResponse } from './index.schemas.ts';
import { lazyChildLogger } from './logger.ts';
import type { Endpoint } from './modules/endpoint.ts';
import { documentation, loadModules } from './modules/registry.ts';
import { guardFor } from './security/guard.ts';
import { registerLoadShedding } from './security/load-shedding.ts';
import { securityHeaders } from './security/security-headers.ts';
import { createValidatorCompiler } from './validation.ts';
import { VERSION } from './version.ts';

const BODY_LIMIT = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// A JSON API's set (OWASP REST Security Cheat Sheet). helmet's defaults are for HTML pages: their
// CSP directives (script-src 'self', style-src … 'unsafe-inline', …) loosened `default-src 'none'`,
// and the other seven headers (COOP, Origin-Agent-Cluster, Referrer-Policy, X-DNS-Prefetch-Control,
// X-Download-Options, X-Permitted-Cross-Domain-Policies, X-XSS-Protection) govern documents, which
// Gatehouse never serves outside /docs. Each header costs every response (docs/benchmarks.md).
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
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** Builds the Fastify app on a context: plugins, every module's endpoints, the index. Never listens. */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: ctx.config.trustProxy,
    // Echo a well-formed incoming X-Request-Id, else make one.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    requestIdHeader: false,
    // Slow clients: a request must arrive whole within 30 s, headers within 10 s.
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // Two log lines per request were most of a /health request's cost: errors and refusals are
    // logged by the error handler, and LOG_LEVEL=debug adds one line per request (below).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, options) =>
      lazyChildLogger(logger, bindings, options) as FastifyBaseLogger,
    routerOptions: { maxParamLength: 512, ignoreTrailingSlash: false },
    ajv: { customOptions: {} },
  });
  app.server.headersTimeout = 10_000;

  app.setValidatorCompiler(createValidatorCompiler());
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('auth', null);
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    reply.header('x-request-id', request.id);
    done();
  });
  if (ctx.log.isLevelEnabled('debug')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.debug({ req: request, res: reply, ms: reply.elapsedTime }, 'request completed');
      done();
    });
  }
  // After the header hook, so a shed request still carries the security headers and its request id.
  await registerLoadShedding(app, ctx.config);
  await app.register(cors, {
    origin: ctx.config.corsOrigins.length > 0 ? [...ctx.config.corsOrigins] : false,
    credentials: false,
    exposedHeaders: ['x-request-id', 'retry-after', 'location', 'www-authenticate'],
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Gatehouse', version: VERSION, description: 'User and access service — API v1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
  });

  const modules = loadModules(ctx);
  const allEndpoints = modules.flatMap((m) => m.endpoints.map((e) => ({ module: m.info.name, endpoint: e })));
  const routeTable = allEndpoints.map(({ endpoint: e }) => ({
    method: e.method,
    pattern: pathPattern(e.path),
  }));
  routeTable.push({ method: 'GET', pattern: /^\/$/ }, { method: 'GET', pattern: /^\/api\/v1\/?$/ });
  installErrorHandlers(app, (path) => [
    ...new Set(routeTable.filter((r) => r.pattern.test(path)).map((r) => r.method)),
  ]);

  for (const { module, endpoint } of allEndpoints) {
    // A callback hook, not an async one: it runs on every request and needs no promise.
    const moduleCheck = (_req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
      if (ctx.modules.isEnabled(module)) done();
      else done(new ApiError('module_disabled', { detail: `The ${module} module is disabled` }));
    };
    const onRequest: Array<onRequestHookHandler | onRequestAsyncHookHandler> = [moduleCheck];
    if (endpoint.access !== 'public') onRequest.push(guardFor(endpoint.access, ctx.db, ctx.accessTokens));
    app.route({
      method: endpoint.method,
      url: endpoint.path,
      schema: openApiSchema(module, endpoint),
      onRequest,
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

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, transformSpecificationClone: true });

  return app;
}

function openApiSchema(module: string, e: Endpoint) {
  return {
    ...e.schema,
    summary: e.summary,
    tags: [module],
    operationId: `${e.group}.${e.label}`,
    ...(e.access === 'public' ? {} : { security: [{ bearer: [] }] }),
  };
}

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
