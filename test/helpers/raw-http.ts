import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** What a raw exchange saw. */
export interface RawExchange {
  /** Everything the server sent, as text. */
  response: string;
  /** The status code of the first response, or null when none came. */
  status: number | null;
  /** How many of the chunks were written before the server closed the connection. */
  chunksSent: number;
  /** True when the server closed the connection (rather than our deadline ending the wait). */
  closedByServer: boolean;
}

/**
 * Speaks HTTP/1.1 over a raw socket: writes `head` at once, then each chunk `intervalMs` apart,
 * stopping early when the server closes. Waits for the close at most `deadlineMs` after the start
 * (a bound on the test, not an assertion on time).
 */
export async function rawExchange(
  port: number,
  head: string,
  chunks: Array<string | Buffer>,
  options: { intervalMs: number; deadlineMs: number },
): Promise<RawExchange> {
  const socket = connect({ port, host: '127.0.0.1' });
  let response = '';
  let closed = false;
  socket.on('data', (d: Buffer) => {
    response += d.toString('latin1');
  });
  // A reset or a write after the server hung up is the very outcome some tests provoke.
  socket.on('error', () => {});
  const closedPromise = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const started = Date.now();
  socket.write(head);
  let chunksSent = 0;
  for (const chunk of chunks) {
    if (closed || socket.destroyed || Date.now() - started > options.deadlineMs) break;
    await sleep(options.intervalMs);
    if (closed || socket.destroyed) break;
    socket.write(chunk);
    chunksSent++;
  }
  const remaining = Math.max(0, options.deadlineMs - (Date.now() - started));
  // The deadline timer is cancelled once the server hangs up, so it never holds the test process.
  const deadline = new AbortController();
  await Promise.race([
    closedPromise,
    sleep(remaining, undefined, { signal: deadline.signal }).catch(() => {}),
  ]);
  deadline.abort();
  const closedByServer = closed;
  socket.destroy();
  const match = /^HTTP\/1\.1 (\d{3})/.exec(response);
  return { response, status: match ? Number(match[1]) : null, chunksSent, closedByServer };
}

/** The body of the first response of a raw exchange (after the blank line), chunked framing removed. */
export function rawBody(response: string): string {
  const [headers = '', ...rest] = response.split('\r\n\r\n');
  const body = rest.join('\r\n\r\n');
  if (!/transfer-encoding: chunked/i.test(headers)) return body;
  let out = '';
  let rest2 = body;
  while (rest2.length > 0) {
    const lineEnd = rest2.indexOf('\r\n');
    const size = Number.parseInt(rest2.slice(0, lineEnd), 16);
    if (!size) break;
    out += rest2.slice(lineEnd + 2, lineEnd + 2 + size);
    rest2 = rest2.slice(lineEnd + 2 + size + 2);
  }
  return out;
}
