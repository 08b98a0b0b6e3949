import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, checked with `new Webhook(secret).verify(body, headers)`. */
export interface Received {
  id: string;
  type: string;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  /** Which of the receiver's secrets verified it (indexes into `secrets`), empty when none did. */
  verifiedBy: number[];
}

/** A real webhook receiver on 127.0.0.1, verifying every attempt the way the package's docs say. */
export interface Receiver {
  url: string;
  /** Requests answered (the answer decided by `respond`). */
  received: Received[];
  /** Requests as they arrived, answered or still held. */
  arrivals: Received[];
  /** Secrets the receiver knows (verification is tried with each). */
  secrets: string[];
  /** The status to answer with next (default 204); a function decides per request. */
  respond: (r: Received) => number;
  /** Holds every answer until `release()` (a delivery in flight). */
  hold(): void;
  release(): void;
  waitFor(predicate: (all: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver. */
export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const waiting: Array<() => void> = [];
  let held = false;
  const receiver: Receiver = {
    url: '',
    received: [],
    arrivals: [],
    secrets: [],
    respond: () => 204,
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const w of waiting.splice(0)) w();
    },
    async waitFor(predicate, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > until)
          throw new Error(`receiver: condition not met; got ${receiver.received.length} requests`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return receiver.received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        receiver.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      const verifiedBy: number[] = [];
      receiver.secrets.forEach((secret, i) => {
        try {
          new Webhook(secret).verify(raw, headers);
          verifiedBy.push(i);
        } catch {
          // not signed with this one
        }
      });
      const body = JSON.parse(raw) as Record<string, unknown>;
      const r: Received = {
        id: headers['webhook-id'],
        type: String(body.type),
        body,
        headers: req.headers,
        verifiedBy,
      };
      receiver.arrivals.push(r);
      const answer = () => {
        receiver.received.push(r);
        res.statusCode = receiver.respond(r);
        res.end();
      };
      if (held) waiting.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
