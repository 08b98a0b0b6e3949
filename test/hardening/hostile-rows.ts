/*
 * The rows of the hostile-input matrix: for every endpoint with a body, query or path parameter,
 * requests that must be refused with one 4xx code of docs/api.md §9 and change nothing.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface HostileRow {
  name: string;
  url: string;
  /** A JSON value to send (JSON.stringify), or `raw` text as is. */
  body?: unknown;
  raw?: string;
  /** Default `application/json` when a body is sent. */
  contentType?: string;
  /** Send the admin's bearer token (default: when the endpoint needs one). */
  anonymous?: boolean;
  /** The acceptable answers (where the contract allows more than one). */
  expect: Expect[];
}

export interface Expect {
  status: number;
  code: string;
}

/** One endpoint's rows. */
export interface EndpointRows {
  method: Method;
  /** The path as the index writes it. */
  path: string;
  /** A request URL that reaches the endpoint, for the probe. */
  probeUrl: string;
  authenticated: boolean;
  rows: HostileRow[];
}

const TEN_KB = 'x'.repeat(10_240);
const NUL = 'a\u0000b';
const RTL = '\u202egnp.exe';
const ZERO_WIDTH = 'a\u200bb\u200d\ufeffc';
const EMOJI = '😀👍🏽🏳️‍🌈';
const SQL = ["' OR '1'='1", "'; DROP TABLE users; --", '1 UNION SELECT password_hash FROM users'];

function deep(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

const bad = (status: number, ...codes: string[]): { expect: Expect[] } => ({
  expect: codes.map((code) => ({ status, code })),
});
/** Any of several refusals (where docs/api.md leaves the choice open). */
const either = (...options: Array<{ expect: Expect[] }>): { expect: Expect[] } => ({
  expect: options.flatMap((o) => o.expect),
});
const V400 = bad(400, 'validation_failed');
const JSON400 = bad(400, 'invalid_json');

/** Rows every JSON-body endpoint must refuse the same way, built around one valid body. */
export function bodyRows(
  valid: Record<string, unknown>,
  opts: { nullIsValid?: boolean; optional?: string[] } = {},
): HostileRow[] {
  const validText = JSON.stringify(valid);
  const inner = validText.slice(1, -1);
  const join = (extra: string) => `{${[extra, inner].filter(Boolean).join(',')}}`;
  const rows: HostileRow[] = [
    { name: 'truncated JSON', url: '', raw: validText.slice(0, -1), ...JSON400 },
    { name: 'trailing comma', url: '', raw: `{${inner},}`, ...JSON400 },
    { name: 'single quotes', url: '', raw: validText.replaceAll('"', "'"), ...JSON400 },
    { name: 'NaN literal', url: '', raw: 'NaN', ...JSON400 },
    { name: 'two JSON texts', url: '', raw: `${validText}${validText}`, ...JSON400 },
    {
      name: 'text/plain',
      url: '',
      raw: validText,
      contentType: 'text/plain',
      ...bad(415, 'unsupported_media_type'),
    },
    {
      name: 'form encoding',
      url: '',
      raw: 'a=b',
      contentType: 'application/x-www-form-urlencoded',
      ...bad(415, 'unsupported_media_type'),
    },
    { name: 'an array', url: '', raw: `[${validText}]`, ...V400 },
    { name: 'a string', url: '', raw: '"x"', ...V400 },
    { name: 'a number', url: '', raw: '12', ...V400 },
    { name: 'an extra field', url: '', body: { ...valid, is_admin: true }, ...V400 },
    // Prototype-poisoning keys: refused while parsing, as JSON the service will not read.
    { name: '__proto__ key', url: '', raw: join('"__proto__":{"role":"admin"}'), ...JSON400 },
    { name: 'escaped __proto__ key', url: '', raw: join('"\\u005f_proto__":{"role":"admin"}'), ...JSON400 },
    {
      name: 'constructor.prototype',
      url: '',
      raw: join('"constructor":{"prototype":{"role":"admin"}}'),
      ...JSON400,
    },
    { name: 'constructor key', url: '', raw: join('"constructor":1'), ...V400 },
    { name: 'deeply nested arrays', url: '', raw: `${'['.repeat(10_000)}${']'.repeat(10_000)}`, ...V400 },
    { name: 'deeply nested objects', url: '', body: deep(2_000), ...V400 },
    { name: 'NUL in a key', url: '', raw: join('"a\\u0000":1'), ...V400 },
  ];
  // An empty body counts as none (clients send Content-Type on bodiless requests): the schema decides.
  if (!opts.nullIsValid) {
    rows.push(
      { name: 'null', url: '', raw: 'null', ...V400 },
      { name: 'empty body', url: '', raw: '', ...V400 },
    );
  }
  for (const [field, value] of Object.entries(valid)) {
    if (typeof value !== 'string') continue;
    const without = { ...valid };
    delete without[field];
    if (!opts.optional?.includes(field))
      rows.push({ name: `${field} missing`, url: '', body: without, ...V400 });
    rows.push(
      { name: `${field} a number`, url: '', body: { ...valid, [field]: 12 }, ...V400 },
      { name: `${field} a boolean`, url: '', body: { ...valid, [field]: true }, ...V400 },
      { name: `${field} null`, url: '', body: { ...valid, [field]: null }, ...V400 },
      { name: `${field} an array`, url: '', body: { ...valid, [field]: [value] }, ...V400 },
      { name: `${field} an object`, url: '', body: { ...valid, [field]: { value } }, ...V400 },
      { name: `${field} nested deep`, url: '', body: { ...valid, [field]: deep(500) }, ...V400 },
      { name: `${field} with NUL`, url: '', body: { ...valid, [field]: `${value}\u0000` }, ...V400 },
      {
        name: `${field} nested __proto__`,
        url: '',
        raw: JSON.stringify(valid).replace(`"${field}":`, `"${field}":{"__proto__":{"x":1}},"_":`),
        ...JSON400,
      },
    );
  }
  return rows;
}

/** `limit` values no listing accepts (docs/api.md §6: 1–100). */
export const BAD_LIMITS = [
  '-1',
  '0',
  '101',
  '1.5',
  '1e309',
  '99999999999999999999999',
  'ten',
  '',
  '%00',
  "1'",
];

/** Cursors no listing ever returned: garbage, edits of a real one, SQL and paths in base64url. */
export function tamperedCursors(real: string): string[] {
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const b64 = (s: string) => Buffer.from(s).toString('base64url');
  // Not the last character: base64url may keep padding bits there, so an edit can decode the same.
  return [
    'abc',
    flip(real, 0),
    flip(real, Math.floor(real.length / 2)),
    flip(real, real.length - 2),
    real.slice(0, -2),
    `${real}AA`,
    b64("0' OR '1'='1"),
    b64('../../etc/passwd'),
    b64(`${Date.now()}.00000000-0000-0000-0000-000000000000.AAAAAAAAAAAAAAAA`),
    'x'.repeat(201),
  ];
}

/**
 * Hostile path segments for an id or token (URL-encoded as sent). A bare `..` or `%2E%2E` is left
 * out: URL parsing (clients, and inject alike) resolves it before it is sent.
 */
export const HOSTILE_IDS = [
  '..%2F..%2Fetc%2Fpasswd',
  '..%5C..%5Cwindows',
  '....%2F%2F',
  'x%00',
  '%00',
  encodeURIComponent(SQL[0] ?? ''),
  encodeURIComponent(SQL[1] ?? ''),
  '%',
  '%zz',
  encodeURIComponent(EMOJI),
  encodeURIComponent(RTL),
  'x'.repeat(600),
  '00000000-0000-0000-0000-000000000000',
  '__proto__',
  'constructor',
];

export { bad, EMOJI, either, NUL, RTL, SQL, TEN_KB, V400, ZERO_WIDTH };
