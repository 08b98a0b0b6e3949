import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/**
 * How the proxy fails: `refuse` stops listening (new connections get ECONNREFUSED), `reset` accepts
 * and closes at once, `blackhole` keeps every socket open and forwards nothing (a silent network
 * drop). Every mode first cuts the live connections, except blackhole, which freezes them.
 */
export type CutMode = 'refuse' | 'reset' | 'blackhole';

/** A loopback TCP proxy in front of PostgreSQL that a test can cut and restore. */
export interface TcpProxy {
  readonly port: number;
  /** The same URL with host and port pointing at the proxy. */
  rewrite(url: string): string;
  /** Live upstream connections being forwarded. */
  readonly connections: number;
  cut(mode: CutMode): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | null;
}

/** Starts a proxy on 127.0.0.1 (a free port) forwarding to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: CutMode | 'open' = 'open';
  const pairs = new Set<Pair>();
  const held = new Set<Socket>();

  const destroyPair = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };

  const onConnection = (client: Socket) => {
    client.on('error', () => {});
    if (mode === 'reset') {
      client.destroy();
      return;
    }
    if (mode === 'blackhole' || mode === 'refuse') {
      held.add(client);
      client.on('close', () => held.delete(client));
      return;
    }
    const pair: Pair = { client, upstream: null };
    pairs.add(pair);
    const upstream = tcpConnect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => destroyPair(pair));
    client.on('close', () => destroyPair(pair));
    upstream.on('close', () => destroyPair(pair));
    client.pipe(upstream);
    upstream.pipe(client);
  };

  let server: Server = createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const port = await listen(0);

  async function restore(): Promise<void> {
    const previous = mode;
    mode = 'open';
    // Frozen connections do not come back: their peers would long have given up on them.
    for (const pair of [...pairs]) if (previous === 'blackhole') destroyPair(pair);
    for (const socket of held) socket.destroy();
    if (previous === 'refuse') {
      server = createServer(onConnection);
      await listen(port);
    }
  }

  return {
    port,
    get connections() {
      return pairs.size;
    },
    rewrite(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async cut(next) {
      if (mode !== 'open') await restore();
      mode = next;
      if (next === 'blackhole') {
        // Frozen, not closed: nothing flows either way and neither side is told.
        for (const pair of pairs) {
          pair.client.unpipe();
          pair.upstream?.unpipe();
          pair.client.pause();
          pair.upstream?.pause();
        }
        return;
      }
      for (const pair of [...pairs]) destroyPair(pair);
      if (next === 'refuse') {
        const closed = stopListening();
        for (const socket of held) socket.destroy();
        await closed;
      }
    },
    restore,
    async close() {
      mode = 'reset';
      for (const pair of [...pairs]) destroyPair(pair);
      for (const socket of held) socket.destroy();
      if (server.listening) await stopListening();
    },
  };
}
