import type { Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AuditEvent, ClientInfo } from '../../../identity/index.ts';
import {
  findIdentity,
  findUserByEmail,
  findUserById,
  insertIdentity,
  insertUser,
  newUserRow,
  normalizeEmail,
  updateIdentityEmail,
  updateUser,
} from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { DB, UserRow } from '../../../platform/db/schema.ts';
import type { VerifiedIdentity } from './id-token.ts';
import { assertMayLinkByEmail, type LinkPolicy } from './linking.ts';

/** How one provider maps identities to accounts: §7's settings for `default`, a provider's own otherwise. */
export interface MappingPolicy extends LinkPolicy {
  readonly autoProvision: boolean;
}

/** The account an identity maps to, whether this sign-in created it, and the audit entries so far. */
export interface MappedIdentity {
  user: UserRow;
  created: boolean;
  events: AuditEvent[];
}

const MAX_NAME_CHARS = 200;

/**
 * Finds the account of a verified identity, else links it by e-mail (docs/api.md §16's rules, through
 * `assertMayLinkByEmail`), else creates one when the policy provisions — in the caller's transaction.
 * Shared by `POST /idp/verify` and the redirect flow of the `providers` module (docs/api.md §18), so
 * both sign-ins map identities by exactly the same rules. `seen.userId` is filled for the audit.
 */
export async function findLinkOrCreate(
  ctx: AppContext,
  trx: Transaction<DB>,
  identity: VerifiedIdentity,
  policy: MappingPolicy,
  client: ClientInfo,
  seen: { userId: string | null },
): Promise<MappedIdentity> {
  const now = Date.now();
  const email = identity.email === null ? null : normalizeEmail(identity.email);
  const { issuer, subject } = identity;
  const events: AuditEvent[] = [];

  const linked = await findIdentity(trx, issuer, subject);
  if (linked) {
    const found = await findUserById(trx, linked.user_id);
    if (!found) throw new Error('identity without user');
    seen.userId = found.id;
    assertMaySignIn(found);
    if (linked.email !== email) await updateIdentityEmail(trx, linked.id, email);
    let user = found;
    if (identity.emailVerified && email === found.email && found.email_verified !== 1) {
      await updateUser(trx, found.id, { email_verified: 1, updated_at: now });
      user = { ...found, email_verified: 1, updated_at: now };
      events.push(verifiedBy(found.id, issuer, client));
    }
    // REQUIRE_VERIFIED_EMAIL (docs/api.md §16): a provider that vouches for the account's own
    // address verified it just above, in this transaction; one that does not is no way around it.
    if (ctx.config.requireVerifiedEmail && user.email_verified !== 1) {
      throw new ApiError('email_not_verified', {
        detail: "Confirm your e-mail address first: the provider has not verified this account's address",
      });
    }
    return { user, created: false, events };
  }
  // An address the provider has not verified proves nothing: it neither links to an account nor
  // creates one (which would squat it before its owner comes). Refused before the address is
  // looked up, so the answer is the same whether or not it is taken (no enumeration, docs/api.md §12).
  if (email !== null && !identity.emailVerified) {
    throw new ApiError('idp_token_invalid', { detail: 'The provider has not verified this e-mail address' });
  }
  const holder = email === null ? undefined : await findUserByEmail(trx, email);
  if (holder) {
    seen.userId = holder.id;
    // docs/api.md §16: a disabled (or invited) account answers 403 first; then the linking rules
    // (verified or operator-vouched address, not an admin, linking on), else 409.
    assertMaySignIn(holder);
    await assertMayLinkByEmail(trx, holder, policy);
    const row = identityRow(holder.id, identity, email, now);
    await insertIdentity(trx, row);
    events.push({
      action: 'identity.link',
      actor: { type: 'user', id: holder.id },
      target: { type: 'identity', id: row.id },
      client,
      details: { issuer, subject, user_id: holder.id, by: 'email' },
    });
    let user = holder;
    if (holder.email_verified !== 1) {
      await updateUser(trx, holder.id, { email_verified: 1, updated_at: now });
      user = { ...holder, email_verified: 1, updated_at: now };
      events.push(verifiedBy(holder.id, issuer, client));
    }
    return { user, created: false, events };
  }
  if (!policy.autoProvision) {
    throw new ApiError('forbidden', {
      detail: 'No account is linked to this identity and automatic provisioning is turned off',
    });
  }
  if (email === null) {
    throw new ApiError('forbidden', {
      detail: 'The provider sent no usable email address, which a new account needs (scope "email")',
    });
  }
  const user = newUserRow(
    {
      created_via: 'idp',
      email,
      name: truncate(identity.name ?? '', MAX_NAME_CHARS),
      email_verified: identity.emailVerified ? 1 : 0,
    },
    now,
  );
  await insertUser(trx, user);
  const row = identityRow(user.id, identity, email, now);
  await insertIdentity(trx, row);
  events.push(
    {
      action: 'user.create',
      actor: { type: 'anonymous' },
      target: { type: 'user', id: user.id },
      client,
      details: { via: 'idp', issuer, role: user.role },
    },
    {
      action: 'identity.link',
      actor: { type: 'user', id: user.id },
      target: { type: 'identity', id: row.id },
      client,
      details: { issuer, subject, user_id: user.id, by: 'provisioning' },
    },
  );
  return { user, created: true, events };
}

/** Disabled accounts stay shut; invited ones must accept their invitation first (docs/idp.md). */
export function assertMaySignIn(user: UserRow): void {
  if (user.status === 'disabled') {
    throw new ApiError('account_disabled', { detail: 'This account is disabled' });
  }
  if (user.status === 'invited') {
    throw new ApiError('forbidden', {
      detail: 'This account has a pending invitation; accept it before signing in with the identity provider',
    });
  }
}

/** A new `identities` row of a verified identity. */
export function identityRow(userId: string, identity: VerifiedIdentity, email: string | null, now: number) {
  return {
    id: uuidv7(),
    user_id: userId,
    issuer: identity.issuer,
    subject: identity.subject,
    email,
    linked_at: now,
  };
}

function truncate(value: string, maxCodePoints: number): string {
  const chars = [...value];
  return chars.length > maxCodePoints ? chars.slice(0, maxCodePoints).join('') : value;
}

/** The provider vouched for the account's own address: audited (and so `email.verified`, docs/api.md §19). */
function verifiedBy(userId: string, issuer: string, client: AuditEvent['client']): AuditEvent {
  return {
    action: 'email.verify',
    actor: { type: 'user', id: userId },
    target: { type: 'user', id: userId },
    client,
    details: { via: 'provider', issuer },
  };
}
