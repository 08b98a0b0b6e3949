import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { AppContext } from './context.ts';
import { ApiError, installErrorHandlers, sendProblem, toApiError } from './errors.ts';
import { IndexResponse } from './index.schemas.ts';
import type { Endpoint } from './modules/endpoint.ts';
import { documentation, loadModules } from './modules/registry.ts';
import { ProblemSchema } from './problem.schemas.ts';
import { guardFor } from './security/guard.ts';
import { createValidatorCompiler } from './validation.ts';
import { VERSION } from './version.ts';

const BODY_LIMIT = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
    routerOptions: { maxParamLength: 512, ignoreTrailingSlash: false },
    // Errors the router raises before any hook (a malformed or over-long path segment) leave as
    // problem+json too; no route matched, so they are 404s.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      sendProblem(reply, toApiError(err));
    },
    ajv: { customOptions: {} },
  });
  app.server.headersTimeout = 10_000;

  app.setValidatorCompiler(createValidatorCompiler());
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await app.register(helmet, {
    // JSON API: the strictest policy; /docs loosens it for its own page only.
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-site' },
  });
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
    const moduleCheck = async () => {
      if (!ctx.modules.isEnabled(module)) {
        throw new ApiError('module_disabled', { detail: `The ${module} module is disabled` });
      }
    };
    const onRequest: Array<(req: FastifyRequest, reply: FastifyReply) => Promise<void>> = [moduleCheck];
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
    // Every error leaves as problem+json; documenting it once per endpoint keeps OpenAPI complete.
    response: { '4xx': ProblemSchema, '5xx': ProblemSchema, ...(e.schema.response as object) },
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
