import type { Transaction } from 'kysely';
import {
  type ClientInfo,
  FEDERATED_LOGIN,
  hasCompatibilityCharacters,
  mfaRequired,
  type Refusal,
  refuseSignIn,
  type SignInOutcome,
  type SignInWay,
  signIn,
  type TokenResponse,
  withLoginAttempt,
} from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { DB } from '../../../platform/db/schema.ts';
import type { HealthCheck } from '../../../platform/health-check.ts';
import { type VerifiedIdentity, verifyIdToken } from './id-token.ts';
import { findLinkOrCreate, type MappingPolicy } from './identity-mapping.ts';
import { LinkRefused } from './linking.ts';
import type { Discovery } from './oidc-client.ts';
import { DEFAULT_PROVIDER, defaultProvider } from './providers.service.ts';
import { reserveIdToken } from './replay.ts';
import { type Upstreams, verifierFor } from './upstream.ts';
import { verifySource } from './verify-source.ts';

/** `GET /api/v1/idp/config` (docs/api.md §7). */
export type IdpConfig = { enabled: false } | ({ enabled: true; client_id: string } & Discovery);

/** `POST /api/v1/idp/verify`'s answer: a token response, and whether the account was created. */
export type IdTokenSignIn = TokenResponse & { created: boolean };

/** The ID token's sign-in as a way in. */
const ID_TOKEN_WAY: SignInWay = { method: 'idp' };

/** A sign-in's outcome and whether it created the account (a second factor due is committed, answered 403). */
type Mapped = SignInOutcome & { created: boolean };

/** The provider settings a front end needs to start a sign-in, from the cached discovery document. */
export async function idpConfig(ctx: AppContext, upstreams: Upstreams): Promise<IdpConfig> {
  const seed = defaultProvider(ctx);
  if (seed === null) return { enabled: false };
  const client = verifierFor(ctx, upstreams, seed);
  const doc = await client.discovery();
  return { enabled: true, ...doc, client_id: client.settings.clientId };
}

/**
 * The `idp` health check (`/health/detailed`): the `default` provider's discovery and keys fetched
 * now; `disabled` when OIDC_ISSUER is not set.
 */
export function defaultProviderHealth(ctx: AppContext, upstreams: Upstreams): Promise<HealthCheck> {
  const seed = defaultProvider(ctx);
  return seed === null ? Promise.resolve({ status: 'disabled' }) : verifierFor(ctx, upstreams, seed).probe();
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
  upstreams: Upstreams,
  input: { idToken: string; nonce?: string | undefined; accessToken?: string | undefined },
  client: ClientInfo,
  provider: string = DEFAULT_PROVIDER,
): Promise<IdTokenSignIn> {
  if (provider === DEFAULT_PROVIDER && defaultProvider(ctx) === null) {
    throw new ApiError('idp_not_configured', {
      detail: 'No identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID)',
    });
  }
  const source = await verifySource(ctx, upstreams, provider);
  const seen: Attempt = { identity: null, userId: null };
  const result = await withLoginAttempt(ctx, { way: ID_TOKEN_WAY, client }, async (attempt) => {
    try {
      let identity = await verifyIdToken(source.client, input.idToken, input.nonce);
      seen.identity = identity;
      if (input.accessToken !== undefined) {
        identity = await source.completeClaims(identity, input.accessToken);
        seen.identity = identity;
      }
      source.refine(identity, input.idToken);
      if (identity.email !== null && hasCompatibilityCharacters(identity.email)) {
        // Refused, never folded: `\u212Aate@…` must not become `kate@…` (docs/api.md §5).
        throw new ApiError('validation_failed', {
          detail:
            "The identity provider's e-mail address contains compatibility characters (NFKC would change it); it is refused, not folded",
        });
      }
      const tryOnce = () =>
        ctx.db.transaction().execute(async (trx) => {
          // First write of the sign-in: the token's one use (docs/api.md §16), undone if it is refused.
          await reserveIdToken(trx, input.idToken, identity.expiresAt);
          return mapAndOpen(ctx, trx, identity, source.policy, client, seen);
        });
      try {
        return await tryOnce();
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        return await tryOnce();
      }
    } catch (err) {
      if (err instanceof ApiError && err.status < 500)
        throw await refuseSignIn(attempt, signInRefusal(err, seen), err);
      throw err;
    }
  });
  if (result.kind === 'second_factor_due') throw mfaRequired(result.methods, result.mfaToken);
  ctx.log.info({ user_id: result.tokens.user.id, created: result.created }, 'identity provider sign-in');
  return { ...result.tokens, created: result.created };
}

/** What the `login.failure` entry of a refused sign-in says; issuer and subject only from a verified token. */
function signInRefusal(err: ApiError, seen: Attempt): Refusal {
  const { identity } = seen;
  return {
    user: seen.userId ? { id: seen.userId } : null,
    reason: err.code,
    wrongGuess: false,
    after: {
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
): Promise<Mapped> {
  const { issuer, subject } = identity;
  const { user, created, events } = await findLinkOrCreate(ctx, trx, identity, policy, client, seen);
  // An account with second factors: the link (or update) commits, and the sign-in continues at
  // POST /login/mfa with an mfa_token whose first factor is `fed` (docs/api.md §13). Otherwise this
  // sign-in's entries (provisioning, linking, then login.success) go in one statement.
  const outcome = await signIn(ctx, trx, {
    user,
    client,
    amr: FEDERATED_LOGIN.amr,
    details: { method: 'idp' },
    events,
    secondFactor: { firstFactor: 'fed', details: { method: 'idp', issuer, subject } },
    opening: { idToken: { issuer, subject, created } },
  });
  return { ...outcome, created };
}
