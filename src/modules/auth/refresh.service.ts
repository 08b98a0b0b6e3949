import { v7 as uuidv7 } from 'uuid';
import {
  type ClientInfo,
  idleWindowS,
  insertRefreshToken,
  markRotated,
  recordAudit,
  revokeSession,
  type TokenResponse,
  tokenRolesOf,
  toPublicUser,
  touchSession,
} from '../../identity/index.ts';
import { gatehouseAccessTokenHook } from '../../identity/tokens/claims-hook.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../identity/tokens/opaque-tokens.ts';
import { openSuccessor, type Successor, sealSuccessor } from '../../identity/tokens/successor-box.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { findRefreshTokenForRotation } from './auth.queries.ts';

type RotationOutcome =
  | {
      kind: 'issued';
      user: UserRow;
      successor: Successor;
      refreshExpiresAt: number;
      /** Seconds the new refresh token lives, counted from the rotation (not a replay). */
      refreshExpiresInS: number;
      replay: boolean;
    }
  | { kind: 'invalid' }
  | { kind: 'reused'; sessionId: string };

/**
 * POST /refresh-token (docs/api.md §5): single-use rotation with reuse detection. The first use of a
 * token issues a successor and seals it under a key derived from the token; a repeat within
 * REFRESH_REUSE_GRACE_S opens that box and answers with the same pair; a repeat after it revokes
 * the session. The decision and its writes happen in one transaction on a locked row.
 */
export async function refresh(
  ctx: AppContext,
  presented: string,
  client: ClientInfo,
): Promise<TokenResponse> {
  const { config } = ctx;
  const outcome = await ctx.db.transaction().execute(async (trx): Promise<RotationOutcome> => {
    const now = Date.now();
    const state = await findRefreshTokenForRotation(trx, hashOpaqueToken(presented), ctx.database.dialect);
    // Sliding, but bounded: no refresh carries a session past its absolute end (ASVS 10.4.8).
    const sessionEndsAt = state ? state.sessionCreatedAt + config.sessionMaxLifetimeS * 1000 : 0;
    if (
      !state ||
      sessionEndsAt <= now ||
      state.expiresAt <= now ||
      state.sessionRevokedAt !== null ||
      state.sessionExpiresAt <= now ||
      state.user.status !== 'active'
    ) {
      return { kind: 'invalid' };
    }

    if (state.rotatedAt !== null) {
      if (now < state.rotatedAt + config.refreshReuseGraceS * 1000 && state.successorBox !== null) {
        const successor = openSuccessor(presented, state.id, state.successorBox);
        // The hash matched, so the box opens unless it was damaged; refuse without revoking then.
        if (!successor) return { kind: 'invalid' };
        const refreshExpiresAt = Math.min(state.rotatedAt + idleWindowS(config) * 1000, sessionEndsAt);
        return {
          kind: 'issued',
          user: state.user,
          successor,
          refreshExpiresAt,
          refreshExpiresInS: 0,
          replay: true,
        };
      }
      await revokeSession(trx, state.sessionId, 'refresh_token_reused');
      // Committed with the revocation; the 401 is thrown only after the commit.
      await recordAudit(trx, {
        action: 'refresh.reuse',
        outcome: 'failure',
        actor: { type: 'anonymous' },
        target: { type: 'session', id: state.sessionId },
        client,
        details: { user_id: state.user.id },
      });
      return { kind: 'reused', sessionId: state.sessionId };
    }

    const refreshToken = newOpaqueToken();
    // A use moves the session's end one idle window on (SESSION_IDLE_TIMEOUT_S, or the refresh
    // token's lifetime), never past its absolute end; touchSession writes it as `expires_at`.
    const refreshExpiresAt = Math.min(now + idleWindowS(config) * 1000, sessionEndsAt);
    await insertRefreshToken(trx, {
      id: uuidv7(),
      sessionId: state.sessionId,
      tokenHash: hashOpaqueToken(refreshToken),
      createdAt: now,
      expiresAt: refreshExpiresAt,
    });
    // The claims hook (docs/claims-hook.md) runs before the presented token is marked rotated, in
    // this transaction: a refusal (TOKEN_HOOK_FAILURE=deny) rolls the rotation back, so the same
    // refresh token works again once the hook answers.
    const { token, claims } = await ctx.accessTokens.sign(
      {
        user: state.user,
        session: {
          id: state.sessionId,
          amr: state.sessionAmr === null ? null : (JSON.parse(state.sessionAmr) as string[]),
          authTime: state.sessionAuthTime ?? state.sessionCreatedAt,
        },
        roles: await tokenRolesOf(ctx, state.user.id, trx),
      },
      gatehouseAccessTokenHook(ctx, state.user),
    );
    const successor: Successor = { accessToken: token, accessExp: claims.exp, refreshToken };
    await markRotated(trx, state.id, now, sealSuccessor(presented, state.id, successor));
    await touchSession(trx, state.sessionId, now, refreshExpiresAt);
    const refreshExpiresInS = Math.floor((refreshExpiresAt - now) / 1000);
    return {
      kind: 'issued',
      user: state.user,
      successor,
      refreshExpiresAt,
      refreshExpiresInS,
      replay: false,
    };
  });

  if (outcome.kind === 'invalid') {
    throw new ApiError('refresh_token_invalid', {
      detail: 'The refresh token is unknown, expired or revoked',
    });
  }
  if (outcome.kind === 'reused') {
    ctx.log.warn({ session_id: outcome.sessionId }, 'refresh token reused after rotation: session revoked');
    throw new ApiError('refresh_token_reused', {
      detail: 'This refresh token was already used; the session has been revoked',
    });
  }
  // A replay hands out a pair issued up to the grace window ago: report what is left of it.
  const now = Date.now();
  const { successor } = outcome;
  return {
    access_token: successor.accessToken,
    token_type: 'Bearer',
    expires_in: outcome.replay
      ? Math.max(0, successor.accessExp - Math.floor(now / 1000))
      : config.accessTokenTtlS,
    refresh_token: successor.refreshToken,
    refresh_expires_in: outcome.replay
      ? Math.max(0, Math.floor((outcome.refreshExpiresAt - now) / 1000))
      : outcome.refreshExpiresInS,
    user: toPublicUser(outcome.user),
  };
}
