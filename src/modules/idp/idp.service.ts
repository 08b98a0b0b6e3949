import type { Transaction } from 'kysely';
import {
  type AuditEvent,
  type ClientInfo,
  completeSignIn,
  FEDERATED_LOGIN,
  hasCompatibilityCharacters,
  recordAudit,
  recordAudits,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import type { DB } from '../../platform/db/schema.ts';
import { countLogin } from '../core/index.ts';
import { issueMfaToken, mfaRequired, type SecondFactorMethod, secondFactors } from '../mfa/index.ts';
import { type VerifiedIdentity, verifyIdToken } from './id-token.ts';
import { findLinkOrCreate, type MappingPolicy } from './identity-mapping.ts';
import type { VerifyResponse } from './idp.schemas.ts';
import { LinkRefused } from './linking.ts';
import type { Discovery, OidcClient } from './oidc-client.ts';
import { reserveIdToken } from './replay.ts';

/** `GET /api/v1/idp/config` (docs/api.md §7). */
export type IdpConfig = { enabled: false } | ({ enabled: true; client_id: string } & Discovery);

/**
 * Where an ID token comes from when it is not the seed's provider: a named provider of the
 * `providers` module (docs/api.md §18, `"provider"` in the body), its verifier and its own settings.
 */
export interface IdTokenSource {
  client: OidcClient;
  policy: MappingPolicy;
  /** The provider's own reading of its claims (e.g. Microsoft's `xms_edov`), and its `allowed_domains`. */
  refine(identity: VerifiedIdentity, idToken: string): void;
}

/** A verified sign-in of an account with second factors: committed, and answered 403 `mfa_required`. */
interface SecondFactorDue {
  mfa: { methods: SecondFactorMethod[]; token: string };
}

/** The provider settings a front end needs to start a sign-in, from the cached discovery document. */
export async function idpConfig(seed: OidcClient | null): Promise<IdpConfig> {
  if (!seed) return { enabled: false };
  const doc = await seed.discovery();
  return { enabled: true, ...doc, client_id: seed.settings.clientId };
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
  seed: OidcClient | null,
  input: { idToken: string; nonce?: string | undefined },
  client: ClientInfo,
  source: IdTokenSource | null = null,
): Promise<VerifyResponse> {
  if (!source && !seed) {
    throw new ApiError('idp_not_configured', {
      detail: 'No identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID)',
    });
  }
  const oidc = source?.client ?? (seed as OidcClient);
  const policy = source?.policy ?? ctx.config.oidc;
  const seen: Attempt = { identity: null, userId: null };
  let result: VerifyResponse | SecondFactorDue;
  try {
    const identity = await verifyIdToken(oidc, input.idToken, input.nonce);
    seen.identity = identity;
    source?.refine(identity, input.idToken);
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
        return mapAndOpen(ctx, trx, identity, policy, client, seen);
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
  policy: MappingPolicy,
  client: ClientInfo,
  seen: Attempt,
): Promise<VerifyResponse | SecondFactorDue> {
  const { issuer, subject } = identity;
  const { user, created, events } = await findLinkOrCreate(ctx, trx, identity, policy, client, seen);

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
