import type { Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { ClientInfo, FreshProof, IdentityRow } from '../../../identity/index.ts';
import {
  deleteIdentity,
  findIdentity,
  insertIdentity,
  listIdentities,
  normalizeEmail,
  recordAudit,
  requireFreshProof,
} from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { dialectOf } from '../../../platform/db/dialect.ts';
import type { DB, UserRow } from '../../../platform/db/schema.ts';
import { listProviders, type Provider } from '../upstream/providers.service.ts';
import type { UpstreamIdentity } from '../upstream/upstream.ts';
import { type FlowRow, lockUser, signInMethods } from './flow.queries.ts';

/** How recent a sign-in must be for a link to need no other proof (docs/api.md §18). */
export const FRESH_SIGN_IN_MS = 5 * 60_000;

/** A link flow's callback: the identity joins the account of the session that started it. */
export async function linkToAccount(
  ctx: AppContext,
  provider: Provider,
  upstream: UpstreamIdentity,
  flow: FlowRow,
  client: ClientInfo,
): Promise<void> {
  const { identity } = upstream;
  const live = flow.session_id === null ? null : await ctx.sessions.read(flow.session_id);
  const now = Date.now();
  if (
    live === null ||
    live.user.id !== flow.user_id ||
    live.session.revoked_at !== null ||
    Number(live.session.expires_at) <= now ||
    live.user.status !== 'active'
  ) {
    throw new ApiError('unauthenticated', { detail: 'The session that asked for this link has ended' });
  }
  const userId = live.user.id;
  await ctx.db.transaction().execute(async (trx) => {
    const holder = await findIdentity(trx, identity.issuer, identity.subject);
    if (holder && holder.user_id !== userId) {
      throw new ApiError('forbidden', {
        detail: `This ${provider.displayName} account is already linked to another account`,
      });
    }
    if (holder) return;
    const row = {
      id: uuidv7(),
      user_id: userId,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email === null ? null : normalizeEmail(identity.email),
      linked_at: now,
    };
    await insertIdentity(trx, row);
    await recordAudit(trx, {
      action: 'identity.link',
      actor: { type: 'user', id: userId },
      target: { type: 'identity', id: row.id },
      client,
      details: {
        issuer: identity.issuer,
        subject: identity.subject,
        user_id: userId,
        by: 'account',
        provider: provider.name,
      },
    });
  });
}

/** An identity as answered: its provider's name and label where a stored provider has that issuer. */
export interface IdentityView {
  id: string;
  provider: string | null;
  display_name: string | null;
  issuer: string;
  subject: string;
  email: string | null;
  linked_at: string;
}

/** A user's identities (`GET /idp/identities`, and `GET /users/<id>/identities` for admins). */
export async function identitiesOf(ctx: AppContext, userId: string): Promise<{ data: IdentityView[] }> {
  // The stored providers through their own service (upstream/), never its query file.
  const [rows, providers] = await Promise.all([listIdentities(ctx.db, userId), listProviders(ctx)]);
  const byIssuer = new Map(providers.data.map((p) => [p.issuer, p]));
  const defaultIssuer = ctx.config.oidc.issuer;
  return {
    data: rows.map((row: IdentityRow) => {
      const p = byIssuer.get(row.issuer);
      const isDefault = !p && row.issuer === defaultIssuer;
      return {
        id: row.id,
        provider: p ? p.name : isDefault ? 'default' : null,
        display_name: p ? p.display_name : null,
        issuer: row.issuer,
        subject: row.subject,
        email: row.email,
        linked_at: new Date(Number(row.linked_at)).toISOString(),
      };
    }),
  };
}

/**
 * `DELETE /idp/identities/<id>` after a fresh proof (docs/api.md §16). Removing the account's last
 * way to sign in (a password, a passkey — every stored one verifies the user —, a linked identity;
 * sign-in by e-mail does not count) is 409 `last_sign_in_method`.
 */
export async function unlinkIdentity(
  ctx: AppContext,
  user: UserRow,
  id: string,
  proof: FreshProof | null | undefined,
  client: ClientInfo,
  freshFederated: boolean,
): Promise<void> {
  const notFound = () => new ApiError('not_found', { detail: 'You have no linked identity with this id' });
  const owned = (await listIdentities(ctx.db, user.id)).some((i) => i.id === id);
  if (!owned) throw notFound();
  const given =
    proof?.current_password !== undefined || proof?.code !== undefined || proof?.passkey !== undefined;
  const change = async (trx: Transaction<DB>) => {
    await lockUser(trx, user.id, dialectOf(trx) === 'postgres');
    const methods = await signInMethods(trx, user.id);
    if (!methods.password && methods.passkeys === 0 && methods.identities <= 1) {
      throw new ApiError('last_sign_in_method', {
        detail: 'This is your last way to sign in; add a password, a passkey or another provider first',
      });
    }
    if (!(await deleteIdentity(trx, user.id, id))) throw notFound();
    await recordAudit(trx, {
      action: 'identity.unlink',
      actor: { type: 'user', id: user.id },
      target: { type: 'identity', id },
      client,
      details: { user_id: user.id },
    });
  };
  // docs/api.md §18: a sign-in through a linked provider in the last 5 minutes is proof enough.
  if (!given && freshFederated) await ctx.db.transaction().execute(change);
  else await requireFreshProof(ctx, user, proof, client, 'identity.unlink', change);
}

/**
 * A link may start when the session's sign-in is at most 5 minutes old (docs/api.md §18: a recent
 * sign-in proves the account holder as well as a password typed now); otherwise 401
 * `reauthentication_required`, and the page asks the person to sign in again.
 */
export function assertFreshSession(authTimeS: unknown): void {
  if (!isFresh(authTimeS)) {
    throw new ApiError('reauthentication_required', {
      detail: 'Linking a provider needs a sign-in from the last 5 minutes; sign in again, then link',
    });
  }
}

/** Whether a token's `auth_time` (seconds) is at most 5 minutes old. */
export function isFresh(authTimeS: unknown): boolean {
  const at = typeof authTimeS === 'number' ? authTimeS * 1000 : 0;
  return Date.now() - at <= FRESH_SIGN_IN_MS;
}
