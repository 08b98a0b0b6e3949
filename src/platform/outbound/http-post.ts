import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { AddressRefusedError, type DeliveryAgents, hostOf } from './address-guard.ts';

/**
 * What one POST came to: a status code, or an error name for the delivery log (never its text).
 * With `keepBody`, the answer's body too, or `tooLarge` when it passed that many bytes.
 */
export type PostOutcome = { status: number; body?: Buffer; tooLarge?: boolean } | { error: string };

/** How a caller wants the answer: a body kept up to `keepBody` bytes (webhooks keep none). */
export interface PostOptions {
  /** Keep the answer's body when it is at most this many bytes (the claims hook reads its answer). */
  keepBody?: number;
  /** The User-Agent sent (default `Gatehouse-Webhooks/1`). */
  userAgent?: string;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs `body` through the guarded agents (address-guard.ts): no redirect is followed (a 3xx is just
 * a failure), the whole exchange is bounded by `timeoutMs`, and the response body is read (up to a
 * limit, so the socket is released) and kept only when `options.keepBody` asks for it. The webhooks
 * module's deliveries and the claims hook (src/identity/tokens/claims-hook.ts) share it.
 */
export function postJson(
  agents: DeliveryAgents,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  options: PostOptions = {},
): Promise<PostOutcome> {
  const keep = options.keepBody ?? 0;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (o: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const target = new URL(url);
    const host = hostOf(target);
    // Node connects to a literal address without calling the agent's lookup: checked here instead.
    if (isIP(host) !== 0 && !agents.literalAllowed(host)) {
      done({ error: 'address_refused' });
      return;
    }
    const secure = target.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': options.userAgent ?? 'Gatehouse-Webhooks/1',
      },
    });
    timer = setTimeout(() => {
      req.destroy(new Error('timeout'));
      done({ error: 'timeout' });
    }, timeoutMs);
    req.on('response', (res) => {
      let seen = 0;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (keep > 0 && seen <= keep) chunks.push(chunk);
        if (seen > Math.max(MAX_RESPONSE_BYTES, keep)) res.destroy();
      });
      const finish = () => {
        const status = res.statusCode ?? 0;
        if (keep === 0) return done({ status });
        // A body cut by an error or a close before its end is no answer to read: too large or lost.
        if (seen > keep) return done({ status, tooLarge: true });
        if (!res.complete) return done({ error: 'connection_reset' });
        done({ status, body: Buffer.concat(chunks) });
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', (err) => done({ error: errorName(err) }));
    req.end(body);
  });
}

/** A short, stable name for a network failure (the delivery log shows it; no host, no text). */
function errorName(err: unknown): string {
  if (err instanceof AddressRefusedError) return 'address_refused';
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failure';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO') return 'tls_error';
  return 'connection_error';
}
