import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../platform/api-error.ts';

const COMMON: Options = {
  allErrors: false,
  // Unknown fields are refused (docs/api.md §1), never dropped or stored.
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  // TypeBox adds `kind`/`modifier` symbols only; keep Ajv from complaining about keywords it lacks.
  keywords: ['kind', 'modifier'],
};

/**
 * Two validators: bodies are checked as sent (a number is not a string), while query strings and
 * path parameters, which are text on the wire, are coerced to the declared types. Each route's
 * validators are compiled when the route is registered (compiling them lazily saved ~80 ms of a
 * ~0.8 s start, under the 10% an optimization must show: docs/benchmarks.md).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  const strict = addFormats.default(new Ajv({ ...COMMON, coerceTypes: false }));
  const coercing = addFormats.default(new Ajv({ ...COMMON, coerceTypes: 'array' }));
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object);
  };
}

/**
 * Where a NUL character (U+0000) sits in a parsed value — a string or an object key — as a JSON
 * pointer, or null when there is none. Iterative: a hostile body may nest thousands of levels deep.
 */
export function nulCharacterPath(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [current, path] = stack.pop() as [unknown, string];
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return path;
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const childPath = pointer(path, key);
        if (key.includes('\u0000')) return childPath;
        stack.push([child, childPath]);
      }
    }
  }
  return null;
}

/**
 * Refuses NUL characters (U+0000) in the query string and the body: 400 `validation_failed`. No
 * field of the API has a use for them, PostgreSQL cannot store them in text (the query would fail:
 * a 500), and C-string based tools downstream would cut values at them. Path parameters are left to
 * their routes, which answer an id or token that names nothing with their own 404.
 */
export function refuseNulCharacters(request: { url: string; query: unknown; body: unknown }): void {
  // The query parser makes a NUL only from `%00` (a raw NUL never gets past the HTTP parser), so a
  // URL without one needs no walk; a GET has no body. Most requests skip both walks.
  if (request.url.includes('%00')) refuse('querystring', nulCharacterPath(request.query));
  if (request.body !== undefined) refuse('body', nulCharacterPath(request.body));
}

function refuse(part: string, path: string | null): void {
  if (path === null) return;
  throw new ApiError('validation_failed', {
    detail: `${part}${path} must not contain NUL characters`,
    errors: [{ path, message: 'must not contain NUL characters' }],
  });
}

function pointer(path: string, key: string): string {
  return `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}
