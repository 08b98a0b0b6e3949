import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { claimsHookHandler, type TokenClaimsRequest } from '../../examples/claims-hook/receiver.ts';

/*
 * A real claims hook receiver on 127.0.0.1 for the tests (docs/claims-hook.md). In `example` mode
 * the documented receiver (examples/claims-hook/receiver.ts) answers, with the claims `decide`
 * returns; every other mode is a way to answer badly. Every call is recorded with whether the
 * `standardwebhooks` package verified its signature with the secret.
 */

export const HOOK_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

export type AnswerMode =
  | 'example'
  | { status: number; body?: string; delayMs?: number; contentType?: string };

export interface Call {
  raw: string;
  body: { type: string; timestamp: string; data: TokenClaimsRequest };
  headers: IncomingHttpHeaders;
  verified: boolean;
}

export interface HookReceiver {
  url: string;
  calls: Call[];
  /** How the next calls are answered (default `example`). */
  mode: AnswerMode;
  /** The claims the example receiver answers with (default `{ plan: "pro" }`). */
  decide: (request: TokenClaimsRequest) => Record<string, unknown>;
  close(): Promise<void>;
}

export async function startHookReceiver(): Promise<HookReceiver> {
  const webhook = new Webhook(HOOK_SECRET);
  const receiver: HookReceiver = {
    url: '',
    calls: [],
    mode: 'example',
    decide: () => ({ plan: 'pro' }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const example = claimsHookHandler(HOOK_SECRET, (request) => receiver.decide(request));
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
      let verified = false;
      try {
        webhook.verify(raw, headers);
        verified = true;
      } catch {
        // recorded as unverified
      }
      receiver.calls.push({ raw, body: JSON.parse(raw) as Call['body'], headers: req.headers, verified });
      const mode = receiver.mode;
      if (mode === 'example') {
        // The documented receiver reads the request itself: hand it a replay of this one.
        const replay = Object.assign(Object.create(req) as typeof req, {
          on(event: string, listener: (arg?: unknown) => void) {
            if (event === 'data') listener(Buffer.from(raw));
            if (event === 'end') listener();
            return replay;
          },
        });
        example(replay, res);
        return;
      }
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(mode.status, { 'content-type': mode.contentType ?? 'application/json' });
        res.end(mode.body ?? '');
      };
      if (mode.delayMs) setTimeout(answer, mode.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/claims`;
  return receiver;
}

/** The environment of an app calling `receiver` (loopback http: allowed as the webhooks' tests do). */
export function hookEnv(receiver: HookReceiver, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TOKEN_HOOK_URL: receiver.url,
    TOKEN_HOOK_SECRET: HOOK_SECRET,
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...extra,
  };
}

/** The payload of a JWT, unverified (the tests check what was signed, Gatehouse verifies elsewhere). */
export function jwtPayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}
