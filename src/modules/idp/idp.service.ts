import type { Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../context.ts';
import { isUniqueViolation } from '../../db/dialect.ts';
import type { DB, UserRow } from '../../db/schema.ts';
import { ApiError } from '../../errors.ts';
import {
  type AuditEvent,
  type ClientInfo,
  completeSignIn,
  FEDERATED_LOGIN,
  findUserByEmail,
  findUserById,
  hasCompatibilityCharacters,
  insertUser,
  newUserRow,
  normalizeEmail,
  recordAudit,
  recordAudits,
  updateUser,
} from '../../identity/index.ts';
import { countLogin } from '../core/index.ts';
import { issueMfaToken, mfaRequired, type SecondFactorMethod, secondFactors } from '../mfa/index.ts';
import { type VerifiedIdentity, verifyIdToken } from './id-token.ts';
import { findIdentity, insertIdentity, updateIdentityEmail } from './idp.queries.ts';
import type { VerifyResponse } from './idp.schemas.ts';
import { assertMayLinkByEmail, LinkRefused } from './linking.ts';
import type { Discovery } from './oidc-client.ts';
import { reserveIdToken } from './replay.ts';

/** `GET /api/v1/idp/config` (docs/api.md §7). */
export type IdpConfig = { enabled: false } | ({ enabled: true; client_id: string } & Discovery);

/** A verified sign-in of an account with second factors: committed, and answered 403 `mfa_required`. */
interface SecondFactorDue {
  mfa: { methods: SecondFactorMethod[]; token: string };
}

const MAX_NAME_CHARS = 200;

/** The provider settings a front end needs to start a sign-in, from the cached discovery document. */
export async function idpConfig(ctx: AppContext): Promise<IdpConfig> {
  if (!ctx.oidc) return { enabled: false };
  const doc = await ctx.oidc.discovery();
  return { enabled: true, ...doc, client_id: ctx.oidc.settings.clientId };
}

/** What a refused sign-in's audit entry can name, filled in as the sign-in learns it. */
interface Attempt {
  identity: VerifiedIdentity | null;
  userId: string | null;
}

/**
 * Verifies an ID token, finds or links or creates the user, and opens a session — all writes, and
 * their audit entries, in one transaction. Two concurrent first sign-ins race on the unique
 * constraints; the loser retries once and then finds what the winner committed. A refusal (4xx) is
 * audited as `login.failure` after the rollback; outages (5xx) are neither audited nor counted.
 */
export async function signInWithIdToken(
  ctx: AppContext,
  input: { idToken: string; nonce?: string | undefined },
  client: ClientInfo,
): Promise<VerifyResponse> {
  if (!ctx.oidc) {
    throw new ApiError('idp_not_configured', {
      detail: 'No identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID)',
    });
  }
  const oidc = ctx.oidc;
  const seen: Attempt = { identity: null, userId: null };
  let result: VerifyResponse | SecondFactorDue;
  try {
    const identity = await verifyIdToken(oidc, input.idToken, input.nonce);
    seen.identity = identity;
    if (identity.email !== null && hasCompatibilityCharacters(identity.email)) {
      // Refused, never folded: `\u212Aate@…` must not become `kate@…` (docs/api.md §5).
      throw new ApiError('validation_failed', {
        detail:
          "The identity provider's e-mail address contains compatibility characters (NFKC would change it); it is refused, not folded",
      });
    }
    const attempt = () =>
      ctx.db.transaction().execute(async (trx) => {
        // First write of the sign-in: the token's one use (docs/api.md §16), undone if it is refused.
        await reserveIdToken(trx, input.idToken, identity.expiresAt);
        return mapAndOpen(ctx, trx, identity, client, seen);
      });
    try {
      result = await attempt();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      result = await attempt();
    }
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) {
      await recordAudit(ctx.db, signInRefusal(err, seen, client));
      countLogin(ctx, 'failure');
    }
    throw err;
  }
  if ('mfa' in result) throw mfaRequired(result.mfa.methods, result.mfa.token);
  countLogin(ctx, 'success');
  ctx.log.info({ user_id: result.user.id, created: result.created }, 'identity provider sign-in');
  return result;
}

/** The `login.failure` entry of a refused sign-in; issuer and subject only from a verified token. */
function signInRefusal(err: ApiError, seen: Attempt, client: ClientInfo): AuditEvent {
  const { identity } = seen;
  return {
    action: 'login.failure',
    outcome: 'failure',
    actor: { type: 'anonymous' },
    target: seen.userId ? { type: 'user', id: seen.userId } : null,
    client,
    details: {
      method: 'idp',
      reason: err.code,
      detail: err.detail ?? null,
      ...(err instanceof LinkRefused && { link_refusal: err.refusal }),
      ...(identity && { issuer: identity.issuer, subject: identity.subject, email: identity.email }),
    },
  };
}

async function mapAndOpen(
  ctx: AppContext,
  trx: Transaction<DB>,
  identity: VerifiedIdentity,
  client: ClientInfo,
  seen: Attempt,
): Promise<VerifyResponse | SecondFactorDue> {
  const now = Date.now();
  const email = identity.email === null ? null : normalizeEmail(identity.email);
  const { issuer, subject } = identity;
  const events: AuditEvent[] = [];
  let user: UserRow;
  let created = false;

  const linked = await findIdentity(trx, identity.issuer, identity.subject);
  if (linked) {
    const found = await findUserById(trx, linked.user_id);
    if (!found) throw new Error('identity without user');
    seen.userId = found.id;
    assertMaySignIn(found);
    if (linked.email !== email) await updateIdentityEmail(trx, linked.id, email);
    user = found;
    if (identity.emailVerified && email === found.email && found.email_verified !== 1) {
      await updateUser(trx, found.id, { email_verified: 1, updated_at: now });
      user = { ...found, email_verified: 1, updated_at: now };
    }
    // REQUIRE_VERIFIED_EMAIL (docs/api.md §16): a provider that vouches for the account's own
    // address verified it just above, in this transaction; one that does not is no way around it.
    if (ctx.config.requireVerifiedEmail && user.email_verified !== 1) {
      throw new ApiError('email_not_verified', {
        detail: "Confirm your e-mail address first: the provider has not verified this account's address",
      });
    }
  } else {
    // An address the provider has not verified proves nothing: it neither links to an account nor
    // creates one (which would squat it before its owner comes). Refused before the address is
    // looked up, so the answer is the same whether or not it is taken (no account
    // enumeration, docs/api.md §12).
    if (email !== null && !identity.emailVerified) {
      throw new ApiError('idp_token_invalid', {
        detail: 'The provider has not verified this e-mail address',
      });
    }
    const holder = email === null ? undefined : await findUserByEmail(trx, email);
    if (holder) {
      seen.userId = holder.id;
      // docs/api.md §16: a disabled (or invited) account answers 403 first; then the linking rules
      // (verified or operator-vouched address, not an admin, linking on), else 409.
      assertMaySignIn(holder);
      await assertMayLinkByEmail(trx, holder, ctx.config.oidc);
      const row = identityRow(holder.id, identity, email, now);
      await insertIdentity(trx, row);
      events.push({
        action: 'identity.link',
        actor: { type: 'user', id: holder.id },
        target: { type: 'identity', id: row.id },
        client,
        details: { issuer, subject, user_id: holder.id, by: 'email' },
      });
      user = holder;
      if (holder.email_verified !== 1) {
        await updateUser(trx, holder.id, { email_verified: 1, updated_at: now });
        user = { ...holder, email_verified: 1, updated_at: now };
      }
    } else {
      if (!ctx.config.oidc.autoProvision) {
        throw new ApiError('forbidden', {
          detail: 'No account is linked to this identity and automatic provisioning is turned off',
        });
      }
      if (email === null) {
        throw new ApiError('forbidden', {
          detail: 'The provider sent no usable email address, which a new account needs (scope "email")',
        });
      }
      user = newUserRow(
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
      created = true;
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
    }
  }

  // An account with second factors: the link (or update) commits, and the sign-in continues at
  // POST /login/mfa with an mfa_token whose first factor is `fed` (docs/api.md §13).
  const methods = await secondFactors(ctx, trx, user.id);
  if (methods.length > 0) {
    events.push({
      action: 'login.mfa_required',
      actor: { type: 'anonymous' },
      target: { type: 'user', id: user.id },
      client,
      details: { method: 'idp', issuer, subject, methods },
    });
    await recordAudits(trx, events);
    return { mfa: { methods, token: await issueMfaToken(trx, user.id, 'fed') } };
  }

  // This sign-in's entries (provisioning, linking, then login.success) in one statement; its
  // login.success names no amr, as it always has.
  const tokens = await completeSignIn(ctx, trx, user, client, FEDERATED_LOGIN.amr, { method: 'idp' }, null, {
    audit: (sessionId) => [
      ...events,
      {
        action: 'login.success',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        client,
        details: { method: 'idp', session_id: sessionId, issuer, subject, created },
      },
    ],
  });
  return { ...tokens, created };
}

/** Disabled accounts stay shut; invited ones must accept their invitation first (docs/idp.md). */
function assertMaySignIn(user: UserRow): void {
  if (user.status === 'disabled') {
    throw new ApiError('account_disabled', { detail: 'This account is disabled' });
  }
  if (user.status === 'invited') {
    throw new ApiError('forbidden', {
      detail: 'This account has a pending invitation; accept it before signing in with the identity provider',
    });
  }
}

function identityRow(userId: string, identity: VerifiedIdentity, email: string | null, now: number) {
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
