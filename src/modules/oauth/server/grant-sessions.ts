import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import {
  type ClientInfo,
  detachSession,
  endSession,
  findUserById,
  isSessionLive,
  signIn,
} from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { type SessionLiveness, sha256 } from './adapter.ts';

export type { SessionLiveness } from './adapter.ts';

import { clientPolicy } from '../clients/clients.service.ts';
import { findSessionLink, upsertSessionLink } from './models.queries.ts';

/*
 * One session model (docs/api.md §17, "Sessions are one"; docs/oauth.md, "Sessions"):
 * - a grant's id IS the id of its Gatehouse session, opened through signIn with the client;
 *   the adapter finds a grant only while that session lives, so every way a session ends (logout
 *   everywhere, password reset or change, revocation, disable, delete, second-factor reset) ends
 *   the grant, and with it its tokens: the library checks the grant on every refresh, userinfo
 *   call and introspection;
 * - the library's browser session is tied to the Gatehouse session of the hosted sign-in that
 *   opened it (`oauth_session_links`); the adapter reads it as signed in only while that session
 *   lives, so `prompt=none` needs a live Gatehouse sign-in.
 */

/** The client address and user agent of requests handed to the library (as Fastify resolved them). */
const requestClients = new WeakMap<IncomingMessage, ClientInfo>();

/** Remembers who sent a request before the library gets it (its own reading ignores TRUST_PROXY's rules). */
export function rememberRequestClient(req: IncomingMessage, client: ClientInfo): void {
  requestClients.set(req, client);
}

export function requestClientOf(req: IncomingMessage): ClientInfo {
  return requestClients.get(req) ?? { ip: null, userAgent: null };
}

export function sessionLiveness(ctx: AppContext): SessionLiveness {
  return {
    grantLive: (grantId) => isSessionLive(ctx.db, grantId, Date.now()),
    // One `session.revoke` entry (and `session.revoked` event) naming the client, by the service.
    grantEnded: async (grantId) => {
      await endSession(ctx.db, grantId, 'oauth_grant_revoked', (s) => ({
        action: 'session.revoke',
        actor: { type: 'system' },
        target: { type: 'session', id: s.id },
        details: { user_id: s.user_id, reason: 'oauth_grant_revoked', ...clientDetails(s.client_id) },
      }));
    },
    browserLive: async (uidHash) => {
      const sessionId = await findSessionLink(ctx.db, uidHash);
      return sessionId !== undefined && isSessionLive(ctx.db, sessionId, Date.now());
    },
  };
}

/** How an audit entry names a session's client (its `session.*` events carry it, docs/api.md §19). */
const clientDetails = (clientId: string | null) => (clientId === null ? {} : { client_id: clientId });

/**
 * RP-initiated logout ends the Gatehouse session too (docs/api.md §17: logout "ends the session";
 * "Sessions are one"): once the library destroyed its browser session on "Yes, sign me out", the
 * Gatehouse session of the hosted sign-in it was tied to ends, audited `logout` like POST /logout,
 * so the next authorization asks for a sign-in. Its grants without `offline_access` end with it
 * (revokeSession); an offline grant's session was detached and stays. A post-middleware of the
 * library's (it runs before the answer leaves), reading only its documented `ctx.oidc`.
 */
export function endsGatehouseSessionOnLogout(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const session = kctx.oidc?.route === 'end_session_confirm' ? kctx.oidc.session : undefined;
    if (session?.destroyed !== true || typeof session.uid !== 'string') return;
    const sessionId = await browserSessionOf(ctx, session.uid);
    if (sessionId === undefined) return;
    await endSession(ctx.db, sessionId, 'logout', (s) => ({
      action: 'logout',
      actor: { type: 'user', id: s.user_id },
      target: { type: 'session', id: s.id },
      client: requestClientOf(kctx.req),
      details: { scope: 'local', via: 'oauth2_logout' },
    }));
  };
}

/** Ties a browser session of the library (its uid) to the Gatehouse session that signed it in. */
export async function linkBrowserSession(ctx: AppContext, uid: string, sessionId: string): Promise<void> {
  await upsertSessionLink(ctx.db, sha256(uid), sessionId);
}

/** The Gatehouse session a browser session of the library was signed in with, if any. */
export async function browserSessionOf(ctx: AppContext, uid: string): Promise<string | undefined> {
  return findSessionLink(ctx.db, sha256(uid));
}

/** How a new grant's session is opened. */
export interface GrantOpening {
  accountId: string;
  clientId: string;
  /** The Gatehouse session of the browser's sign-in; the grant's session ends with it. */
  parentId: string | null;
  amr: readonly string[];
  /** When the browser session authenticated (epoch seconds, the library's `loginTs`). */
  loginTs: number;
  client: ClientInfo;
}

/**
 * A new grant whose id is a new Gatehouse session's: the one sign-in pipeline opens it (recorded
 * as a sign-in into that client, audited `login.success` with `method: oauth`). Not saved here.
 */
export async function openGrant(ctx: AppContext, provider: Provider, o: GrantOpening) {
  const user = await findUserById(ctx.db, o.accountId);
  if (!user) throw new Error('grant for an unknown account');
  const amr = o.amr.length > 0 ? o.amr : ['user'];
  // The audit entry (and the `session.created` event made from it) names the client.
  const clientName = (await clientPolicy(ctx, o.clientId))?.name ?? o.clientId;
  const details = { method: 'oauth', client_id: o.clientId, client_name: clientName };
  const { sessionId } = await ctx.db.transaction().execute((trx) =>
    signIn(ctx, trx, {
      user,
      client: o.client,
      amr,
      details,
      opening: { oauthGrant: { clientId: o.clientId, parentId: o.parentId, authTime: o.loginTs * 1000 } },
    }),
  );
  return new provider.Grant({ jti: sessionId, accountId: o.accountId, clientId: o.clientId });
}

/**
 * The library's `expiresWithSession`, with its default rule (a token lives with the browser
 * session unless `offline_access` was granted); an offline token also frees the grant's session
 * from the browser session, so a logout there leaves it (docs/api.md §17).
 */
export function expiresWithSession(ctx: AppContext) {
  return async (_kctx: unknown, code: { scopes: Set<string>; grantId?: string }) => {
    const ends = !code.scopes.has('offline_access');
    if (!ends && code.grantId !== undefined) await detachSession(ctx.db, code.grantId);
    return ends;
  };
}
