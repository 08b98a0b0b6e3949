import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** The OpenAPI document's fixed part; the paths come from the app's routes. */
export interface DocsOptions {
  openapi: Record<string, unknown>;
  /**
   * Whether operations tagged so (the first tag: the module) are listed now. Asked on every request
   * for the document, so a module toggled off at run time leaves it at once (a disabled module's endpoints are not advertised).
   */
  isListed?: (tag: string) => boolean;
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, unknown>>;
}

/** The document without the operations whose module is off (a new object; the cached one stays whole). */
export function listedOnly<T extends object>(doc: T, isListed: ((tag: string) => boolean) | undefined): T {
  const { paths } = doc as OpenApiDocument;
  if (!isListed || !paths) return doc;
  const kept: Record<string, Record<string, unknown>> = {};
  for (const [path, item] of Object.entries(paths)) {
    const operations = Object.entries(item).filter(([, op]) => {
      const tag = (op as { tags?: unknown } | null)?.tags;
      return !(Array.isArray(tag) && typeof tag[0] === 'string' && !isListed(tag[0]));
    });
    if (operations.length > 0) kept[path] = Object.fromEntries(operations);
  }
  return { ...doc, paths: kept };
}

/**
 * `/openapi.json` (the document @fastify/swagger builds from every route's schema) and the Swagger
 * UI under `/docs`, whose page carries its own CSP in place of the strict one every other answer
 * has. Register before the routes: @fastify/swagger records them as they are added.
 */
export async function registerDocs(app: FastifyInstance, options: DocsOptions): Promise<void> {
  await app.register(swagger, { openapi: options.openapi });
  await app.register(async (scope) => {
    await scope.register(swaggerUi, {
      routePrefix: '/docs',
      transformSpecificationClone: true,
      // The page's own copy of the document (/docs/json, /docs/yaml) lists what /openapi.json lists.
      transformSpecification: (spec: Record<string, unknown>) => listedOnly(spec, options.isListed),
    });
    // The page's CSP (its inline script and style by hash: swagger-ui's own list), on what it
    // serves only: a problem (a missing asset) keeps the strict policy of every JSON answer.
    const { script, style } = scope.swaggerCSP;
    const csp = `default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self' ${script.join(' ')}; script-src-attr 'none'; style-src 'self' ${style.join(' ')}`;
    scope.addHook('onSend', (_request, reply, payload, done) => {
      if (reply.statusCode < 400) reply.header('content-security-policy', csp);
      done(null, payload);
    });
  });
  app.get('/openapi.json', { schema: { hide: true } }, () => listedOnly(app.swagger(), options.isListed));
}
