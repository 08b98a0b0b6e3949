import type { IncomingMessage, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

/*
 * A claims hook receiver (docs/claims-hook.md): Gatehouse POSTs `token.claims` before it signs a
 * user's access token; this answers `{"claims": {…}}` with what the team's own data says about the
 * user. The signature is checked with the `standardwebhooks` package first (the `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` headers, over the raw body): anything not signed with
 * TOKEN_HOOK_SECRET is refused before it is read. test/hook/claims-hook.test.ts runs this file.
 *
 *   import { createServer } from 'node:http';
 *   createServer(claimsHookHandler(process.env.TOKEN_HOOK_SECRET!, async ({ user }) => ({
 *     plan: await planOf(user.id),
 *   }))).listen(8080);
 */

/** What Gatehouse sends (`data` of the event). */
export interface TokenClaimsRequest {
  token: 'access_token' | 'id_token';
  user: { id: string; email: string; name: string | null; role: string; status: string };
  client_id: string | null;
  audience: string;
  organization: { id: string; slug: string; roles: string[] } | null;
  /** Every claim of the token as it will be signed. */
  claims: Record<string, unknown>;
}

/** The extra claims for one token; {} adds none. Never `sub`, `aud`, `exp`… (docs/claims-hook.md). */
export type DecideClaims = (
  request: TokenClaimsRequest,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

const MAX_BODY_BYTES = 64 * 1024;

/** A node:http request listener answering Gatehouse's claims hook. */
export function claimsHookHandler(secret: string, decide: DecideClaims) {
  const webhook = new Webhook(secret);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let event: { type?: string; data?: TokenClaimsRequest };
      try {
        // Checks the signature and that the timestamp is recent (replays are refused).
        event = webhook.verify(raw, {
          'webhook-id': String(req.headers['webhook-id'] ?? ''),
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        }) as typeof event;
      } catch {
        res.writeHead(401).end();
        return;
      }
      if (event.type !== 'token.claims' || event.data === undefined) {
        res.writeHead(400).end();
        return;
      }
      try {
        const claims = await decide(event.data);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ claims }));
      } catch {
        // Gatehouse treats a non-2xx answer as a failure (TOKEN_HOOK_FAILURE decides what follows).
        res.writeHead(500).end();
      }
    });
  };
}
