import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES } from '../../src/platform/error-codes.ts';

/*
 * Property-based fuzzing over the service's own OpenAPI document: arbitraries are built from each
 * operation's schemas (valid values, and hostile ones), every request goes through app.inject(),
 * and every response must be a non-5xx that matches its documented schema (problem+json with a
 * code from the closed table for errors).
 */

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
  additionalProperties?: boolean | JsonSchema;
};

interface Operation {
  method: string;
  path: string;
  operationId: string;
  secured: boolean;
  parameters: Array<{ in: 'path' | 'query'; name: string; required?: boolean; schema: JsonSchema }>;
  body: JsonSchema | null;
  responses: Record<string, JsonSchema | null>;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        security?: unknown[];
        parameters?: Operation['parameters'];
        requestBody?: { content?: Record<string, { schema: JsonSchema }> };
        responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
      }
    >
  >;
}

/** Reads the operations from the app's /openapi.json. */
export async function readOperations(app: FastifyInstance): Promise<Operation[]> {
  const doc = JSON.parse((await app.inject({ url: '/openapi.json' })).body) as OpenApiDocument;
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const responses: Operation['responses'] = {};
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        responses[status] = Object.values(r.content ?? {})[0]?.schema ?? null;
      }
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        secured: (op.security ?? []).length > 0,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
        responses,
      });
    }
  }
  return ops;
}

const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '../../etc/passwd',
    '%00',
    '\u0000',
    "' OR 1=1 --",
    '"; drop table users; --',
    '\u202egnp.exe',
    'a\u200bb',
    '😀👍🏽',
    'ＡＤＭＩＮ@ＥＸＡＭＰＬＥ.ＣＯＭ',
    'Admin@Example.COM',
    '__proto__',
    'constructor',
    '%',
    '_',
    '\\',
    '<script>alert(1)</script>',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constant('x'.repeat(10_000)),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53 + 1, 1.5, null, true, false),
  fc.constant({ __proto__: { admin: true } }),
  fc.constant(JSON.parse('{"__proto__":{"role":"admin"}}')),
  fc.constant({ constructor: { prototype: { role: 'admin' } } }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.constant(deepNest(200)),
);

function deepNest(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** An arbitrary of values that (mostly) satisfy the schema. */
export function validArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(validArbitrary));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validArbitrary(schema.items ?? {}), { maxLength: 3 });
    case 'object': {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const entries = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validArbitrary(s)]));
      return fc.record(entries, { requiredKeys: [...required].filter((k) => k in entries) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'email':
      return fc.oneof(fc.emailAddress(), fc.constantFrom('ada@example.com', 'root@gatehouse.test'));
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
  }
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 64, min + 64);
  return fc.oneof(
    fc.string({ minLength: min, maxLength: max }),
    fc.string({ unit: 'grapheme', minLength: min, maxLength: max }),
  );
}

/** An arbitrary mixing valid values with hostile ones at any level. */
export function mixedArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.type === 'object' && schema.properties) {
    const props = Object.fromEntries(
      Object.entries(schema.properties).map(([k, s]) => [
        k,
        fc.oneof({ weight: 3, arbitrary: validArbitrary(s) }, hostileValue),
      ]),
    );
    return fc.oneof(
      fc.record(props, { requiredKeys: [] }),
      fc
        .record(props, { requiredKeys: [] })
        .chain((o) => fc.record({ extra: hostileValue }).map((x) => ({ ...o, ...x }))),
      hostileValue,
    );
  }
  return fc.oneof({ weight: 2, arbitrary: validArbitrary(schema) }, hostileValue);
}

export interface FuzzRequest {
  method: string;
  url: string;
  body?: string;
  headers: Record<string, string>;
}

/** Builds a request arbitrary for one operation. */
export function requestArbitrary(
  op: Operation,
): fc.Arbitrary<{ req: Omit<FuzzRequest, 'headers'>; caller: Caller }> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const pathArb = fc.tuple(...pathParams.map((p) => fc.oneof(validArbitrary(p.schema), hostileString)));
  const queryArb = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(fc.oneof({ weight: 3, arbitrary: validArbitrary(p.schema) }, hostileValue), {
        nil: undefined,
      }),
    ),
  );
  const bodyArb: fc.Arbitrary<string | undefined> = op.body
    ? fc.oneof(
        { weight: 6, arbitrary: mixedArbitrary(op.body).map((v) => JSON.stringify(v) ?? 'null') },
        fc.constantFrom('{', '{"a":', '[]', 'null', '"str"', '{"email":"a@b.c",}', '\u0000'),
      )
    : fc.constant(undefined);
  return fc
    .record({
      path: pathArb,
      query: queryArb,
      body: bodyArb,
      caller: fc.constantFrom<Caller>('admin', 'user', 'none'),
    })
    .map(({ path, query, body, caller }) => {
      let url = op.path;
      pathParams.forEach((p, i) => {
        url = url.replace(`{${p.name}}`, encodeURIComponent(String(path[i])));
      });
      const qs = new URLSearchParams();
      queryParams.forEach((p, i) => {
        const v = query[i];
        if (v !== undefined) qs.set(p.name, typeof v === 'string' ? v : JSON.stringify(v));
      });
      const q = qs.toString();
      return {
        req: { method: op.method, url: q ? `${url}?${q}` : url, ...(body !== undefined ? { body } : {}) },
        caller,
      };
    });
}

const KNOWN_CODES = new Set(Object.keys(ERROR_CODES));

/** Checks one response: no 5xx (503 from capacity limits aside), problem+json with a known code, 2xx matching its schema. */
export function checkResponse(
  op: Operation,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  validators: Map<string, ValidateFunction>,
): string | null {
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode >= 500 && res.statusCode !== 503) return `${res.statusCode} ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 400) {
    if (!type.startsWith('application/problem+json')) return `error without problem+json: ${type}`;
    const body = JSON.parse(res.body) as { code?: string; status?: number };
    if (!body.code || !KNOWN_CODES.has(body.code)) return `unknown code ${body.code}`;
    if (body.status !== res.statusCode) return `status mismatch ${body.status} vs ${res.statusCode}`;
    return null;
  }
  if (res.statusCode === 204) return null;
  const validate = validators.get(`${op.operationId} ${res.statusCode}`);
  if (!validate) return `undocumented status ${res.statusCode}`;
  // A text response (GET /metrics: Prometheus text) is checked as the string its schema says it is.
  const body: unknown = /^application\/([\w.+-]+\+)?json/.test(type) ? JSON.parse(res.body) : res.body;
  if (!validate(body))
    return `response does not match schema: ${JSON.stringify(validate.errors).slice(0, 300)}`;
  return null;
}

/** Compiles the documented 2xx response schemas. */
export function responseValidators(ops: Operation[]): Map<string, ValidateFunction> {
  const ajv = addFormats.default(new Ajv({ strict: false, allErrors: false }));
  const map = new Map<string, ValidateFunction>();
  for (const op of ops) {
    for (const [status, schema] of Object.entries(op.responses)) {
      if (/^2\d\d$/.test(status) && schema) map.set(`${op.operationId} ${status}`, ajv.compile(schema));
    }
  }
  return map;
}

/** Who sends a fuzzed request: an admin, an ordinary user, or nobody. */
export type Caller = 'admin' | 'user' | 'none';

export interface FuzzOptions {
  runsPerOperation: number;
  seed?: number;
  skip?: (op: Operation) => boolean;
  /** The access level of each operation (by operationId): a 2xx below it is a failure. */
  access?: Map<string, 'public' | 'authenticated' | 'admin'>;
  /** Checked after every 2xx to a mutating request; returns what is broken, or null. */
  invariants?: (caller: Caller) => Promise<string | null>;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What a caller may not get a 2xx for; null when the answer is allowed. */
function accessViolation(level: string | undefined, caller: Caller, status: number): string | null {
  if (status < 200 || status >= 300) return null;
  if (level === 'admin' && caller !== 'admin') return `2xx for ${caller} on an admin endpoint`;
  if (level === 'authenticated' && caller === 'none')
    return '2xx without a token on an authenticated endpoint';
  return null;
}

/** Runs the property over every operation; resolves to the number of requests and operations. */
export async function fuzzApp(
  app: FastifyInstance,
  authHeader: (caller: Exclude<Caller, 'none'>) => Promise<string>,
  options: FuzzOptions,
): Promise<{ requests: number; operations: number }> {
  const ops = (await readOperations(app)).filter((op) => !options.skip?.(op));
  const validators = responseValidators(ops);
  let requests = 0;
  for (const op of ops) {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(op), async ({ req, caller }) => {
        const headers: Record<string, string> = {};
        if (req.body !== undefined) headers['content-type'] = 'application/json';
        if (caller !== 'none' && op.secured) headers.authorization = await authHeader(caller);
        const res = await app.inject({
          method: req.method as 'GET',
          url: req.url,
          payload: req.body,
          headers,
        });
        requests++;
        const where = `${op.operationId} ${req.method} ${req.url} as ${caller} body=${req.body?.slice(0, 200)}`;
        const problem =
          checkResponse(op, res, validators) ??
          accessViolation(options.access?.get(op.operationId), caller, res.statusCode) ??
          (/password_hash|\$argon2/.test(res.body) ? 'a password hash in the response' : null);
        if (problem) throw new Error(`${where} → ${problem}`);
        if (res.statusCode < 300 && MUTATING.has(req.method) && options.invariants) {
          const broken = await options.invariants(caller);
          if (broken) throw new Error(`${where} → ${res.statusCode}, then: ${broken}`);
        }
      }),
      { numRuns: options.runsPerOperation, ...(options.seed !== undefined ? { seed: options.seed } : {}) },
    );
  }
  return { requests, operations: ops.length };
}
