import type { Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../context.ts';
import type { DB, UserRow } from '../../db/schema.ts';
import { ApiError } from '../../errors.ts';
import { type ClientInfo, openSession, type TokenResponse } from '../auth/sessions.service.ts';
import { normalizeEmail } from '../users/email.ts';
import { findUserByEmail, findUserById, insertUser, updateUser } from '../users/users.queries.ts';
import { type VerifiedIdentity, verifyIdToken } from './id-token.ts';
import {
  findIdentity,
  hasIdentities,
  insertIdentity,
  isUniqueViolation,
  touchLastLogin,
  updateIdentityEmail,
} from './idp.queries.ts';
import type { Discovery } from './oidc-client.ts';

/** `GET /api/v1/idp/config` (API.md §7). */
export type IdpConfig = { enabled: false } | ({ enabled: true; client_id: string } & Discovery);

/** The token response of API.md §5 plus whether the account was created by this sign-in. */
export type IdpSignInResponse = TokenResponse & { created: boolean };

const MAX_NAME_CHARS = 200;

/** The provider settings a front end needs to start a sign-in, from the cached discovery document. */
export async function idpConfig(ctx: AppContext): Promise<IdpConfig> {
  if (!ctx.oidc) return { enabled: false };
  const doc = await ctx.oidc.discovery();
  return { enabled: true, ...doc, client_id: ctx.oidc.settings.clientId };
}

/**
 * Verifies an ID token, finds or links or creates the user, and opens a session — all writes in one
 * transaction. Two concurrent first sign-ins race on the unique constraints; the loser retries once
 * and then finds what the winner committed.
 */
export async function signInWithIdToken(
  ctx: AppContext,
  input: { idToken: string; nonce?: string | undefined },
  client: ClientInfo,
): Promise<IdpSignInResponse> {
  if (!ctx.oidc) {
    throw new ApiError('idp_not_configured', {
      detail: 'No identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID)',
    });
  }
  const identity = await verifyIdToken(ctx.oidc, input.idToken, input.nonce);
  const attempt = () => ctx.db.transaction().execute((trx) => mapAndOpen(ctx, trx, identity, client));
  let result: IdpSignInResponse;
  try {
    result = await attempt();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    result = await attempt();
  }
  ctx.log.info({ user_id: result.user.id, created: result.created }, 'identity provider sign-in');
  return result;
}

async function mapAndOpen(
  ctx: AppContext,
  trx: Transaction<DB>,
  identity: VerifiedIdentity,
  client: ClientInfo,
): Promise<IdpSignInResponse> {
  const now = Date.now();
  const email = identity.email === null ? null : normalizeEmail(identity.email);
  let user: UserRow;
  let created = false;

  const linked = await findIdentity(trx, identity.issuer, identity.subject);
  if (linked) {
    const found = await findUserById(trx, linked.user_id);
    if (!found) throw new Error('identity without user');
    assertMaySignIn(found);
    if (linked.email !== email) await updateIdentityEmail(trx, linked.id, email);
    user = found;
    if (identity.emailVerified && email === found.email && found.email_verified !== 1) {
      await updateUser(trx, found.id, { email_verified: 1, updated_at: now });
      user = { ...found, email_verified: 1, updated_at: now };
    }
  } else {
    const holder = email === null ? undefined : await findUserByEmail(trx, email);
    if (holder) {
      // An email the provider has not verified proves nothing about who owns the account.
      if (!identity.emailVerified) {
        throw new ApiError('email_taken', {
          detail:
            'An account with this email exists; the provider has not verified the email, so the sign-in cannot be linked to it',
        });
      }
      if (!ctx.config.oidc.linkByEmail) {
        throw new ApiError('email_taken', {
          detail: 'An account with this email exists and linking by email is turned off',
        });
      }
      // An account that got its (unverified) email from another identity may belong to whoever
      // claimed that address first; handing it to this identity too would share it with them.
      if (holder.email_verified !== 1 && (await hasIdentities(trx, holder.id))) {
        throw new ApiError('email_taken', {
          detail: 'An account with this email exists, but its email is not verified, so it cannot be linked',
        });
      }
      assertMaySignIn(holder);
      await insertIdentity(trx, identityRow(holder.id, identity, email, now));
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
      user = {
        id: uuidv7(),
        email,
        name: truncate(identity.name ?? '', MAX_NAME_CHARS),
        role: 'user',
        status: 'active',
        password_hash: null,
        email_verified: identity.emailVerified ? 1 : 0,
        created_at: now,
        updated_at: now,
        last_login_at: null,
      };
      await insertUser(trx, user);
      await insertIdentity(trx, identityRow(user.id, identity, email, now));
      created = true;
    }
  }

  await touchLastLogin(trx, user.id, now);
  const tokens = await openSession(ctx, { ...user, last_login_at: now }, client, trx);
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
