import helmet, { type HelmetOptions } from 'helmet';

/**
 * The response headers helmet sets for these options, taken once from its middleware: the options
 * are static, so the headers are too, and every response gets them from one plain hook (src/http/app.ts).
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
