import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../kernel/context.types.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { type AuditEvent, recordAudits } from '../audit.queries.ts';
import {
  ENROLLMENT_GRANT,
  type EnrollmentGrant,
  enrollmentOnly,
  enrollmentRequired,
} from '../require-mfa.ts';
import { endSessionsOverCap } from '../session-cap.ts';
import { recordLogin } from '../sessions.queries.ts';
import {
  type AppSessionOwner,
  type ClientInfo,
  startAppSession,
  startEnrollmentSession,
  startSession,
} from '../sessions.ts';
import { type TokenResponse, toPublicUser } from '../user.schemas.ts';

/**
 * What a way in records besides the session, when it is not a plain login. The defaults are the
 * login's: `last_login_at` (and the password's new hash) written, one `login.success` entry. signIn
 * (sign-in.ts) fills it from the named opening; nothing else calls openSignInSession.
 */
export interface SessionRecord {
  /**
   * false: the session opens without counting as a login (`last_login_at` stays as it was).
   * Invitation acceptance and a password change open a session this way.
   */
  recordLogin?: boolean;
  /**
   * The audit entries that cover this sign-in instead of `login.success`, given the new session's
   * id, written in one statement after the session opened (`invitation.accept`, `password.change`,
   * or the identity provider's `user.create`/`identity.link`/`login.success`). [] writes none.
   */
  audit?: (sessionId: string) => readonly AuditEvent[];
  /** Entries written before `login.success`, in the same statement (provisioning, linking). */
  events?: readonly AuditEvent[];
  /**
   * A sign-in into an OAuth client (docs/api.md §17, "Sessions are one"): the session is the
   * grant's, names the client, and holds no Gatehouse token; `authTime` (epoch ms) is when the
   * browser session it came from authenticated.
   */
  app?: AppSessionOwner & { authTime: number };
}

/**
 * The session a sign-in opens, once its last factor passed, in the caller's transaction. The login
 * is recorded (with the password's new hash when it was rehashed), a session opens with `amr` and
 * `auth_time` now (docs/api.md §13: `auth_time` is when the sign-in completed), and `login.success`
 * is audited naming that session, with `details` saying how (`method` and anything of its own) and
 * `amr` and `session_id` added. A way in that records or audits differently says so in `record`.
 * Features cannot open a session any other way: neither this nor the session opener is exported
 * from identity/index.ts, and the dependency rule keeps features out of identity's inner files.
 */
export async function openSignInSession(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  user: UserRow,
  client: ClientInfo,
  amr: readonly string[],
  details: { method: string } & Record<string, unknown>,
  newHash: string | null,
  record: SessionRecord,
): Promise<{ sessionId: string; tokens: TokenResponse | null }> {
  const at = Date.now();
  const login = record.recordLogin ?? true;
  if (login) await recordLogin(trx, user.id, at, newHash);
  const signedIn = login ? { ...user, last_login_at: at } : user;
  const { app } = record;
  // REQUIRE_MFA (docs/mfa.md): one factor where two are required opens an enrolment-only session
  // whose grant marks the answer (no refresh token, no full access token); an OAuth client's sign-in
  // gets nothing (the guard refuses the browser session it comes from first: the same rule).
  const enrollment = enrollmentOnly(ctx.config.requireMfa, user.role, amr);
  if (enrollment && app) throw enrollmentRequired();
  let grant: EnrollmentGrant | null = null;
  let session: { sessionId: string; tokens: TokenResponse | null };
  if (app) {
    session = {
      sessionId: await startAppSession(ctx, signedIn, client, { amr, authTime: app.authTime }, app, trx),
      tokens: null,
    };
  } else if (enrollment) {
    const opened = await startEnrollmentSession(ctx, signedIn, client, { amr, authTime: at }, trx);
    grant = opened.grant;
    session = { sessionId: opened.sessionId, tokens: enrollmentAnswer(signedIn, grant) };
  } else {
    session = await startSession(ctx, signedIn, client, { amr, authTime: at }, trx);
  }
  // docs/auth.md, "How many sessions": at SESSIONS_PER_USER_MAX the user's oldest sessions end.
  await endSessionsOverCap(ctx, trx, user.id);
  // Features acting on every sign-in (joining an organization by domain), in this transaction.
  await ctx.signIn.sessionOpened(trx, { user: signedIn, sessionId: session.sessionId, amr });
  const entries: readonly AuditEvent[] = record.audit
    ? record.audit(session.sessionId)
    : [
        ...(record.events ?? []),
        {
          action: 'login.success',
          actor: { type: 'user', id: user.id },
          target: { type: 'user', id: user.id },
          client,
          details: {
            ...details,
            amr,
            session_id: session.sessionId,
            ...(grant !== null && { enrollment_only: true }),
          },
          // The row as this sign-in left it: its `session.created` event needs no read of it.
          subject: signedIn,
        },
      ];
  await recordAudits(trx, entries);
  return session;
}

/**
 * The answer of an enrolment-only sign-in: shaped as a token answer so every way in returns it
 * unchanged, but holding no token (the empty strings never leave: the endpoint layer answers 403
 * `mfa_enrollment_required` with the grant it carries, src/http/endpoint.ts).
 */
function enrollmentAnswer(user: UserRow, grant: EnrollmentGrant): TokenResponse {
  return {
    access_token: '',
    token_type: 'Bearer',
    expires_in: 0,
    refresh_token: '',
    refresh_expires_in: 0,
    user: toPublicUser(user),
    [ENROLLMENT_GRANT]: grant,
  } as TokenResponse;
}
