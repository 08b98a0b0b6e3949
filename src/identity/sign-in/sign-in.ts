import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { type AuditEvent, recordAudits } from '../audit.queries.ts';
import type { SecondFactorMethod } from '../factors/census.ts';
import { issueMfaToken } from '../factors/mfa-tokens.ts';
import { secondFactors } from '../factors/second-factors.ts';
import type { AppSessionOwner, ClientInfo } from '../sessions.ts';
import type { TokenResponse } from '../user.schemas.ts';
import { updateUser } from '../users.queries.ts';
import type { LoginAttempt } from './attempt.ts';
import { openSignInSession, type SessionRecord } from './open-session.ts';

/**
 * How a sign-in opens its session when it is not a plain login, named (one member each):
 * - `invitation`: an invitation accepted with a password (docs/invitations.md). No login is counted;
 *   `invitation.accept` covers the session instead of `login.success`.
 * - `passwordChange`: the session a password change hands back (docs/api.md §6). No login is
 *   counted; `password.change` (with how many sessions the change ended) covers it.
 * - `oauthGrant`: a sign-in into an OAuth client (docs/api.md §17, "Sessions are one"): the grant's
 *   session names the client and holds no Gatehouse token; `authTime` (epoch ms) is when the
 *   browser session it came from authenticated. No login is counted.
 * - `idToken`: an ID token's sign-in (POST /idp/verify): its `login.success` names the issuer, the
 *   subject and whether the account was created, and no `amr`, as it always has.
 */
export type Opening =
  | { invitation: { id: string } }
  | { passwordChange: { sessionsRevoked: number } }
  | { oauthGrant: AppSessionOwner & { authTime: number } }
  | { idToken: { issuer: string; subject: string; created: boolean } };

/** What was proven, by whom, and how the sign-in goes on. */
export interface SignInRequest {
  /** The account, as the way in found it (active, its proof verified). */
  user: UserRow;
  client: ClientInfo;
  /** RFC 8176 methods of the session (`["pwd"]`, `["hwk","user"]`, `["fed","otp"]`…). */
  amr: readonly string[];
  /** `login.success` details: `method` first, then anything of the way's own (amr, session_id follow). */
  details: { method: string } & Record<string, unknown>;
  /** The attempt whose ticket a completed sign-in settles (withLoginAttempt), in this transaction. */
  attempt?: LoginAttempt;
  /** The password's new hash when it was rehashed at today's parameters. */
  newHash?: string | null;
  /** Entries of this sign-in written with its own, before it (provisioning, linking). */
  events?: readonly AuditEvent[];
  /**
   * A first factor: the account's second factors are asked first. When it holds any, nothing opens:
   * `login.mfa_required` (with these details, `methods` added) is audited and an mfa_token issued for
   * `firstFactor`; an account whose every factor is switched off is refused (403
   * `second_factor_unavailable`, docs/api.md §16).
   */
  secondFactor?: {
    firstFactor: 'pwd' | 'fed' | 'otp';
    details: { method: string } & Record<string, unknown>;
  };
  opening?: Opening;
  /**
   * The sign-in's second step (POST /login/mfa): its first factor passed the address checks
   * (ctx.signIn.checkAddress) when the mfa_token was issued, so they are not asked again.
   */
  firstFactorChecked?: boolean;
}

/** The two outcomes of a sign-in that was not refused. */
export type SignInOutcome = SignedIn | SecondFactorDue;
export interface SignedIn {
  kind: 'signed_in';
  sessionId: string;
  tokens: TokenResponse;
}
export interface SecondFactorDue {
  kind: 'second_factor_due';
  methods: SecondFactorMethod[];
  mfaToken: string;
}

/**
 * The one way in (docs/architecture.md, "One way a session opens"): every way in — password, passkey,
 * second factor, e-mail code or link, ID token, external provider, invitation, password change, an
 * OAuth client's sign-in — verifies its proof, finds the user, and calls this in its transaction.
 * With `secondFactor` the account's second factors are asked first (second factor due: an
 * mfa_token); otherwise, or without any, the attempt's ticket is settled as a success and the
 * session opens (openSignInSession: the login recorded, `login.success` audited, REQUIRE_MFA's
 * enrolment-only session, SESSIONS_PER_USER_MAX).
 */
export async function signIn(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  request: SignInRequest & { opening: { oauthGrant: unknown } },
): Promise<{ kind: 'signed_in'; sessionId: string }>;
export async function signIn(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  request: SignInRequest & { secondFactor?: undefined },
): Promise<SignedIn>;
export async function signIn(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  request: SignInRequest,
): Promise<SignInOutcome>;
export async function signIn(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  request: SignInRequest,
): Promise<SignInOutcome | { kind: 'signed_in'; sessionId: string }> {
  const { user, client, amr, details, attempt, events = [], secondFactor } = request;
  const newHash = request.newHash ?? null;
  // docs/api.md §22: a service account acts only through its keys; no way in opens it a session,
  // whatever proof got this far (it has no address, password or factor to prove anyway).
  if (user.kind === 'service') {
    throw new ApiError('invalid_credentials', { detail: 'Service accounts cannot sign in' });
  }
  // docs/api.md §23: an address a feature refuses (sso_required) signs in by no way but its own,
  // whatever proof got this far. A password change or an OAuth client's sign-in continues a session
  // that already passed; a second step's first factor passed when its mfa_token was issued.
  const continues =
    request.firstFactorChecked === true ||
    (request.opening !== undefined &&
      ('passwordChange' in request.opening || 'oauthGrant' in request.opening));
  if (!continues) {
    const provider = typeof details.provider === 'string' ? details.provider : null;
    await ctx.signIn.checkAddress(trx, { email: user.email, user, provider });
  }
  if (secondFactor) {
    const methods = await secondFactors(ctx, trx, user.id);
    if (methods.length > 0) {
      // A right first factor alone resets nothing (docs/api.md §13): the counts clear when the
      // sign-in completes, at POST /login/mfa.
      if (newHash !== null) await updateUser(trx, user.id, { password_hash: newHash });
      await recordAudits(trx, [
        ...events,
        {
          action: 'login.mfa_required',
          actor: { type: 'anonymous' },
          target: { type: 'user', id: user.id },
          client,
          details: { ...secondFactor.details, methods },
        },
      ]);
      return {
        kind: 'second_factor_due',
        methods,
        mfaToken: await issueMfaToken(trx, user.id, secondFactor.firstFactor),
      };
    }
  }
  // The account's failures clear and the address gets this attempt back.
  await attempt?.succeed(trx);
  const session = await openSignInSession(
    ctx,
    trx,
    user,
    client,
    amr,
    details,
    newHash,
    sessionRecord(request.opening, user, client, events),
  );
  if (session.tokens === null) return { kind: 'signed_in', sessionId: session.sessionId };
  return { kind: 'signed_in', sessionId: session.sessionId, tokens: session.tokens };
}

/** What a named opening records instead of a login (openSignInSession's defaults when there is none). */
function sessionRecord(
  opening: Opening | undefined,
  user: UserRow,
  client: ClientInfo,
  events: readonly AuditEvent[],
): SessionRecord {
  if (opening === undefined) return { events };
  const onUser = { actor: { type: 'user', id: user.id }, client } as const;
  if ('invitation' in opening) {
    return {
      recordLogin: false,
      audit: () => [
        ...events,
        {
          ...onUser,
          action: 'invitation.accept',
          target: { type: 'invitation', id: opening.invitation.id },
          details: { user_id: user.id },
        },
      ],
    };
  }
  if ('passwordChange' in opening) {
    return {
      recordLogin: false,
      audit: () => [
        ...events,
        {
          ...onUser,
          action: 'password.change',
          target: { type: 'user', id: user.id },
          details: { sessions_revoked: opening.passwordChange.sessionsRevoked },
        },
      ],
    };
  }
  if ('oauthGrant' in opening) return { recordLogin: false, app: opening.oauthGrant, events };
  const { issuer, subject, created } = opening.idToken;
  return {
    audit: (sessionId) => [
      ...events,
      {
        ...onUser,
        action: 'login.success',
        target: { type: 'user', id: user.id },
        details: { method: 'idp', session_id: sessionId, issuer, subject, created },
      },
    ],
  };
}
