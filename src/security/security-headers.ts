import { createRequire } from 'node:module';
import type { FastifyReply } from 'fastify';
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

// Fastify keeps a reply's headers in a plain object under this (internal) symbol until it writes
// them. Writing the constant headers there directly skips reply.header()'s per-call work (lower-
// casing, the set-cookie checks): about 5% of a /health request's instructions (docs/benchmarks.md).
const REPLY_HEADERS = fastifyReplyHeaders();

function fastifyReplyHeaders(): symbol | undefined {
  try {
    const symbols = createRequire(import.meta.url)('fastify/lib/symbols.js') as { kReplyHeaders?: unknown };
    return typeof symbols.kReplyHeaders === 'symbol' ? symbols.kReplyHeaders : undefined;
  } catch {
    // A release that no longer lets the file be loaded: the public path below serves.
    return undefined;
  }
}

/**
 * Puts constant, already lower-cased headers plus the request id on a reply. Falls back to the
 * public reply.headers() should a Fastify release move its header object (a test checks both paths).
 */
export function headerWriter(
  headers: Readonly<Record<string, string>>,
  replyHeaders: symbol | undefined = REPLY_HEADERS,
): (reply: FastifyReply, requestId: string) => void {
  const names = Object.keys(headers);
  const values = names.map((name) => headers[name] as string);
  return (reply, requestId) => {
    const target =
      replyHeaders === undefined ? undefined : (reply as unknown as Record<symbol, unknown>)[replyHeaders];
    if (typeof target !== 'object' || target === null) {
      reply.headers(headers).header('x-request-id', requestId);
      return;
    }
    const out = target as Record<string, unknown>;
    for (let i = 0; i < names.length; i++) out[names[i] as string] = values[i];
    out['x-request-id'] = requestId;
  };
}
