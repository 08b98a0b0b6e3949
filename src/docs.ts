import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HTTPMethods,
} from 'fastify';

/** The OpenAPI document's fixed part; the paths come from the app's routes. */
export interface DocsOptions {
  openapi: Record<string, unknown>;
  /**
   * Whether operations tagged so (the first tag: the module) are listed now. Asked on every request
   * for the document, so a module toggled off at run time leaves it at once (issue 17.9).
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

interface DeclaredRoute {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  schema: unknown;
}

// Not copied from the docs app's answer: the connection's own headers, and the length, which
// Fastify sets again for the bytes it sends (and keeps for HEAD, as for any GET route).
const NOT_COPIED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

/**
 * Serves `/openapi.json` and the Swagger UI under `/docs`, loading @fastify/swagger,
 * @fastify/swagger-ui and what comes with them (@fastify/static, glob, send, yaml) on the first
 * request to either rather than at start: ~2 MB of heap a service that nobody reads the docs of
 * never needs (docs/benchmarks.md, peak memory). Call it before the routes are declared: it
 * records each route as @fastify/swagger would (HEAD and hidden routes aside), and the docs app built on
 * first use declares them again, with the same schemas and do-nothing handlers, so the document
 * is the one @fastify/swagger would have made in the app itself. Requests to `/docs` are answered
 * by that app through `inject`, status and headers (the page's own CSP among them) included; a
 * path it does not know (a missing static file included) is this app's ordinary 404, with the
 * strict CSP of every other JSON answer.
 */
export function registerDocs(app: FastifyInstance, options: DocsOptions): void {
  const routes: DeclaredRoute[] = [];
  app.addHook('onRoute', (route) => {
    // Hidden routes (these docs routes among them) are left out of the document anyway.
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true;
    if (route.method !== 'HEAD' && !hidden)
      routes.push({ method: route.method, url: route.url, schema: route.schema });
  });

  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = () => {
    docs ??= buildDocsApp(routes, options).catch((err: unknown) => {
      docs = undefined;
      throw err;
    });
    return docs;
  };

  app.addHook('onClose', async () => {
    if (docs) await (await docs.catch(() => null))?.close();
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () =>
    listedOnly((await docsApp()).swagger(), options.isListed),
  );

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const { host: _host, ...headers } = request.headers;
    // Always GET: for a HEAD request Fastify sends the GET answer's headers without its body.
    const res = await (await docsApp()).inject({ method: 'GET', url: request.url, headers });
    if (res.statusCode === 404) return reply.callNotFound();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !NOT_COPIED.has(name)) reply.header(name, value);
    }
    reply.code(res.statusCode);
    // An empty answer (a redirect) stays bodiless: a Buffer would get a content-type of its own.
    return res.rawPayload.length > 0 ? reply.send(res.rawPayload) : reply.send();
  };
  app.get('/docs', { schema: { hide: true } }, forward);
  app.get('/docs/*', { schema: { hide: true } }, forward);
}

async function buildDocsApp(routes: DeclaredRoute[], options: DocsOptions): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  const docs = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: false } });
  // The routes only feed the document: nothing is validated or serialized here.
  docs.setValidatorCompiler(() => () => true);
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await docs.register(swagger, { openapi: options.openapi });
  for (const route of routes) {
    docs.route({ method: route.method, url: route.url, schema: route.schema as object, handler: noAnswer });
  }
  await docs.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformSpecificationClone: true,
    // The page's own copy of the document (/docs/json, /docs/yaml) lists what /openapi.json lists.
    transformSpecification: (spec: Record<string, unknown>) => listedOnly(spec, options.isListed),
  });
  await docs.ready();
  return docs;
}

async function noAnswer(): Promise<never> {
  throw new Error('the docs app only documents routes');
}
