/**
 * The URL a log line may carry (docs/api.md §16 "No token in a log line"; docs/operations.md).
 *
 * The path is rebuilt from the route that matched, not from the request line: every path parameter
 * is written `:token` unless the route names it as an identifier (`id`, `…_id`) or a slug (`name`,
 * `version`, `file`) AND its value has that shape (a UUID, a short lowercase slug); an identifier
 * of another shape is written `:<its name>`. The rule is default-deny on the parameter's name, so a
 * route added later with `:token`, `:code`, `:uid` or a wildcard is covered without a list of paths.
 * A request no route served (404, 405) keeps only its path segments that are short lowercase words
 * (`api`, `v1`, `jwks.json`) or UUIDs; every other segment becomes `:token` (no token Gatehouse
 * issues has such a shape). The query string never
 * appears: only the names of its parameters (`?code&state`), each a short plain word.
 */

/** What the serializer is given under `req`: a Fastify request, or a bare IncomingMessage. */
export interface LoggableRequest {
  method?: string;
  url?: string;
  routeOptions?: { url?: string };
  params?: unknown;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const SLUG_PARAMS = new Set(['name', 'version', 'file']);
/** A path segment kept as is when no route explains it: no token Gatehouse issues has this shape. */
const WORD = /^[a-z0-9._-]{1,20}$/;
const QUERY_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/;

const routeTables = new WeakMap<object, string[]>();

/** Records every route pattern the app registers (Fastify's onRoute), for the log test's sweep. */
export function recordRoutes(app: {
  addHook(name: 'onRoute', hook: (route: { url: string }) => void): unknown;
}): void {
  const table: string[] = [];
  routeTables.set(app, table);
  app.addHook('onRoute', (route) => {
    if (!table.includes(route.url)) table.push(route.url);
  });
}

/** The route patterns an app registered (for the log test's sweep), in registration order. */
export function recordedRoutes(app: object): readonly string[] {
  return routeTables.get(app) ?? [];
}

/** The URL to log for a request: its route's path with secrets replaced, and query names only. */
export function loggableUrl(req: LoggableRequest): string {
  const raw = typeof req.url === 'string' ? req.url : '';
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const query = q === -1 ? '' : queryNames(raw.slice(q + 1));
  return `${loggablePath(req, path)}${query}`;
}

function loggablePath(req: LoggableRequest, path: string): string {
  const pattern = req.routeOptions?.url;
  const params = (req.params ?? {}) as Record<string, unknown>;
  if (typeof pattern === 'string' && pattern !== '*' && pattern !== '/*') return fromPattern(pattern, params);
  return unexplained(path);
}

function fromPattern(pattern: string, params: Record<string, unknown>): string {
  return pattern
    .split('/')
    .map((segment) => {
      if (segment === '*') return unexplained(String(params['*'] ?? '')).replace(/^\//, '') || '*';
      if (!segment.includes(':') && !segment.includes('*')) return segment;
      const name = /^:(\w+)$/.exec(segment)?.[1];
      // A segment with several parameters or a regular expression: nothing in it is known safe.
      if (name === undefined) return ':token';
      return shownParam(name, String(params[name] ?? ''));
    })
    .join('/');
}

function shownParam(name: string, value: string): string {
  if (name === 'id' || name.endsWith('_id')) return UUID.test(value) ? value : `:${name}`;
  if (SLUG_PARAMS.has(name)) return SLUG.test(value) ? value : `:${name}`;
  return ':token';
}

function unexplained(path: string): string {
  return path
    .split('/')
    .map((s) => (s === '' || WORD.test(s) || UUID.test(s) ? s : ':token'))
    .join('/');
}

function queryNames(query: string): string {
  const names = new Set<string>();
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (QUERY_NAME.test(name)) names.add(name);
    if (names.size === 16) break;
  }
  return names.size === 0 ? '' : `?${[...names].join('&')}`;
}
