import helmet, { type HelmetOptions } from 'helmet';

/**
 * The response headers helmet would set for these options, computed once. @fastify/helmet builds
 * a fresh helmet middleware (and re-parses the CSP) on every request, which cost about a tenth of
 * a /health request (docs/benchmarks.md); the options are static, so the headers are too.
 */
export function securityHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const capture = {
    setHeader(name: string, value: unknown) {
      if (typeof value !== 'string') throw new TypeError(`helmet header ${name} is not a static string`);
      headers[name.toLowerCase()] = value;
    },
    removeHeader() {},
  };
  let failure: unknown;
  helmet(options)({} as never, capture as never, (err?: unknown) => {
    failure = err;
  });
  if (failure) throw failure;
  return Object.freeze(headers);
}
