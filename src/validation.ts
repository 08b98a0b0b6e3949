import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ApiError } from './errors.ts';

const COMMON: Options = {
  allErrors: false,
  // Unknown fields are refused (API.md §1), never dropped or stored.
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  // TypeBox adds `kind`/`modifier` symbols only; keep Ajv from complaining about keywords it lacks.
  keywords: ['kind', 'modifier'],
};

/**
 * Two validators: bodies are checked as sent (a number is not a string), while query strings and
 * path parameters, which are text on the wire, are coerced to the declared types.
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
 * Refuses NUL characters (U+0000) anywhere in a request. No field of the API has a use for them,
 * PostgreSQL cannot store them in text (the query would fail: a 500), and C-string based tools
 * downstream would cut values at them. In the query string or the body: 400 `validation_failed`;
 * in a path parameter (an id, a token, a module name) nothing can have that name: 404 `not_found`.
 */
export function refuseNulCharacters(request: { params: unknown; query: unknown; body: unknown }): void {
  if (nulCharacterPath(request.params) !== null) {
    throw new ApiError('not_found', { detail: 'No resource has a name with a NUL character' });
  }
  for (const [part, value] of [
    ['querystring', request.query],
    ['body', request.body],
  ] as const) {
    const path = nulCharacterPath(value);
    if (path === null) continue;
    throw new ApiError('validation_failed', {
      detail: `${part}${path} must not contain NUL characters`,
      errors: [{ path, message: 'must not contain NUL characters' }],
    });
  }
}

/**
 * The JSON body parser. Like Fastify's own it strips a leading BOM and refuses prototype-poisoning
 * keys (`__proto__`, `constructor.prototype`), but says which refusal it is: broken JSON is 400
 * `invalid_json`; well-formed JSON with such a key is the unknown-field refusal of API.md §1,
 * 400 `validation_failed` (Fastify reports both as "invalid JSON").
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) {
    throw new ApiError('invalid_json', { detail: 'The body is empty but Content-Type is application/json' });
  }
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw new ApiError('invalid_json', { detail: 'The body is not valid JSON' });
  }
  const path = poisonedKeyPath(value);
  if (path !== null) {
    throw new ApiError('validation_failed', {
      detail: `body${path} is not an allowed field`,
      errors: [{ path, message: 'is not an allowed field' }],
    });
  }
  return value;
}

function poisonedKeyPath(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (node === null || typeof node !== 'object') continue;
    if (Object.hasOwn(node, '__proto__')) return `${path}/__proto__`;
    const ctor = (node as { constructor?: unknown }).constructor;
    if (Object.hasOwn(node, 'constructor') && ctor !== null && typeof ctor === 'object') {
      if (Object.hasOwn(ctor, 'prototype')) return `${path}/constructor/prototype`;
    }
    for (const [key, child] of Object.entries(node)) stack.push([child, pointer(path, key)]);
  }
  return null;
}

function pointer(path: string, key: string): string {
  return `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}
