import { randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import {
  type ClientInfo,
  enrollmentGrantOf,
  enrollmentRequired,
  type LoginAttempt,
  refuseSignIn,
  type SignInWay,
  signIn,
  withLoginAttempt,
} from '../../../identity/index.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { Db } from '../../../platform/db/schema.ts';
import type { UpstreamIdentity } from '../upstream/id-token.ts';
import { findLinkOrCreate, type MappedIdentity } from '../upstream/identity-mapping.ts';
import { notFound, type Provider, requireProvider } from '../upstream/providers.service.ts';
import { reserveIdToken } from '../upstream/replay.ts';
import {
  assertAllowedDomain,
  authorizationUrl,
  exchange,
  type Upstreams,
  usesFormPost,
} from '../upstream/upstream.ts';
import { insertFlow, takeFlow } from './flow.queries.ts';
import { linkToAccount } from './link.service.ts';

/** A flow lives 10 minutes (docs/api.md §18); so does a pending second factor's handle. */
export const FLOW_TTL_MS = 10 * 60_000;

export type FlowPurpose = 'sign_in' | 'link';

/** A provider's sign-in as a way in (its entries name the provider beside `method`). */
export const PROVIDER_WAY: SignInWay = { method: 'idp' };

/** The start's answer: where to send the browser, and the cookie that binds the flow to it. */
export interface Started {
  location: string;
  browserToken: string;
  /** `SameSite=None` for `form_post` providers (their callback is a cross-site POST). */
  crossSitePost: boolean;
  /** A SAML connection's flow: its cookie is scoped to the ACS (/saml/), not to the callbacks. */
  saml?: boolean;
}

const sealContext = (hash: string) => `idp_flow:${hash}`;

/** Seals a flow's secret to the browser's hash. */
export const sealFlow = (ctx: AppContext, hash: string, value: Buffer) =>
  key(ctx).seal(value, sealContext(hash));

function key(ctx: AppContext) {
  const k = ctx.secrets.key();
  if (k === null) throw new ApiError('module_unavailable', { detail: 'SECRETS_KEY is not set' });
  return k;
}

/** The callback URL registered at the provider. */
export function callbackUrl(ctx: AppContext, name: string): string {
  return `${ctx.config.publicUrl.replace(/\/+$/, '')}/api/v1/idp/${name}/callback`;
}

/**
 * Starts a redirect flow: state, nonce and a PKCE verifier are made here and kept server-side with
 * `return_to` (already checked), keyed by the hash of a fresh random value that only the browser's
 * cookie holds. `binding` ties a link flow to the signed-in session that asked for it.
 */
export async function startFlow(
  ctx: AppContext,
  upstreams: Upstreams,
  name: string,
  returnTo: string,
  purpose: FlowPurpose,
  binding: { userId: string; sessionId: string } | null = null,
): Promise<Started> {
  const provider = await requireProvider(ctx, name);
  if (!provider.enabled) throw notFound(name);
  const browserToken = newOpaqueToken();
  const hash = hashOpaqueToken(browserToken);
  const state = randomState();
  const nonce = randomNonce();
  const codeVerifier = randomPKCECodeVerifier();
  const location = await authorizationUrl(ctx, upstreams, provider, {
    redirectUri: callbackUrl(ctx, name),
    state,
    nonce,
    codeVerifier,
    fresh: purpose === 'link',
  });
  const now = Date.now();
  await insertFlow(ctx.db, {
    browser_hash: hash,
    purpose,
    provider: name,
    state,
    nonce,
    verifier_box: key(ctx).seal(Buffer.from(codeVerifier), sealContext(hash)),
    return_to: returnTo,
    user_id: binding?.userId ?? null,
    session_id: binding?.sessionId ?? null,
    created_at: now,
    expires_at: now + FLOW_TTL_MS,
  });
  return { location, browserToken, crossSitePost: usesFormPost(provider) };
}

/** Where a callback leaves the browser. */
export type Landing =
  | { kind: 'signed_in'; refreshToken: string; refreshTtlS: number; returnTo: string }
  | { kind: 'second_factor'; browserToken: string; returnTo: string }
  | { kind: 'linked'; returnTo: string }
  | { kind: 'refused'; code: string };

export const spent = () =>
  new ApiError('link_invalid', {
    detail: 'This sign-in link was already used, has expired or was not started here',
  });

/**
 * The callback (docs/api.md §18): the browser's flow is taken out once (a missing, spent, expired or
 * foreign one: `link_invalid`), the code is exchanged with the stored state, nonce and PKCE verifier,
 * the identity is verified and mapped by the rules of §16, and the sign-in ends in `signIn` with
 * amr `fed` — or, when the account has second factors, in a pending step kept server-side.
 * Any refusal lands on the sign-in page with its code (audited and counted: refuseSignIn); nothing
 * is signed in.
 */
export function finishFlow(
  ctx: AppContext,
  upstreams: Upstreams,
  name: string,
  callback: URL | Request,
  browserToken: string | undefined,
  client: ClientInfo,
): Promise<Landing> {
  return withLoginAttempt(ctx, { way: PROVIDER_WAY, client }, (attempt) =>
    landFlow(ctx, upstreams, attempt, name, callback, browserToken),
  );
}

async function landFlow(
  ctx: AppContext,
  upstreams: Upstreams,
  attempt: LoginAttempt,
  name: string,
  callback: URL | Request,
  browserToken: string | undefined,
): Promise<Landing> {
  const { client } = attempt;
  let provider: Provider | null = null;
  try {
    if (!browserToken) throw spent();
    const hash = hashOpaqueToken(browserToken);
    const flow = await takeFlow(ctx.db, hash);
    if (!flow || flow.purpose === 'second_factor' || flow.provider !== name || flow.expires_at < Date.now()) {
      throw spent();
    }
    const verifier = key(ctx).open(flow.verifier_box, sealContext(hash));
    if (verifier === null) throw spent();
    provider = await requireProvider(ctx, name);
    if (!provider.enabled) throw notFound(name);
    const upstream = await exchange(ctx, upstreams, provider, callback, {
      state: flow.state,
      nonce: flow.nonce,
      codeVerifier: verifier.toString(),
    });
    assertAllowedDomain(provider, upstream);
    if (flow.purpose === 'link') {
      await linkToAccount(ctx, provider, upstream, flow, client);
      return { kind: 'linked', returnTo: flow.return_to };
    }
    return await signInWithProvider(ctx, attempt, provider, upstream, flow.return_to);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) {
      ctx.log.warn({ err, provider: name }, 'provider callback failed');
    }
    const code = err instanceof ApiError ? err.code : 'internal_error';
    if (err instanceof ApiError && err.status < 500) {
      const refusal = { reason: code, details: { provider: name }, after: { detail: err.detail ?? null } };
      await refuseSignIn(attempt, { ...refusal, wrongGuess: false }, err);
    }
    return { kind: 'refused', code };
  }
}

/** What a sign-in of a kind adds inside the sign-in's transaction (a SAML connection's replay record and provisioning). */
export interface SignInExtras {
  reserve?: (trx: Db) => Promise<void>;
  /** After the account is found, linked or created; may add audit entries to `mapped.events`. */
  afterMapped?: (trx: Db, mapped: MappedIdentity) => Promise<void>;
}

/**
 * Maps a verified identity and signs in through the one pipeline. `reserve` records what must sign
 * in once (a SAML assertion) inside the sign-in's transaction, so a refusal does not record it.
 */
export async function signInWithProvider(
  ctx: AppContext,
  attempt: LoginAttempt,
  provider: Provider,
  upstream: UpstreamIdentity,
  returnTo: string,
  extra: SignInExtras = {},
): Promise<Landing> {
  const { reserve, afterMapped } = extra;
  const { client } = attempt;
  const { identity, idToken } = upstream;
  const seen = { userId: null as string | null };
  const policy = {
    linkByEmail: provider.linkByEmail,
    linkAdmins: provider.linkAdmins,
    autoProvision: provider.autoProvision,
  };
  const tryOnce = () =>
    ctx.db.transaction().execute(async (trx): Promise<Landing> => {
      // "An ID token signs in once" (docs/api.md §16), as at POST /idp/verify.
      if (idToken !== null) await reserveIdToken(trx, idToken, identity.expiresAt);
      if (reserve) await reserve(trx);
      const mapped = await findLinkOrCreate(ctx, trx, identity, policy, client, seen);
      if (afterMapped) await afterMapped(trx, mapped);
      const { user, created, events } = mapped;
      const { issuer, subject } = identity;
      const outcome = await signIn(ctx, trx, {
        user,
        client,
        amr: ['fed'],
        details: { method: 'idp', provider: provider.name, issuer, subject, created },
        attempt,
        events,
        secondFactor: {
          firstFactor: 'fed',
          details: { method: 'idp', provider: provider.name, issuer, subject },
        },
      });
      if (outcome.kind === 'second_factor_due') {
        const { mfaToken, methods } = outcome;
        const browserToken = await storeSecondFactor(ctx, trx, provider.name, mfaToken, methods, returnTo);
        return { kind: 'second_factor', browserToken, returnTo };
      }
      const { tokens } = outcome;
      // REQUIRE_MFA (docs/mfa.md): a browser landing has no way to carry an enrolment-only token;
      // nothing is signed in, and the sign-in page says why (the transaction rolls back).
      if (enrollmentGrantOf(tokens) !== null) throw enrollmentRequired();
      return {
        kind: 'signed_in',
        refreshToken: tokens.refresh_token,
        refreshTtlS: tokens.refresh_expires_in,
        returnTo,
      };
    });
  try {
    return await tryOnce();
  } catch (err) {
    // Two first sign-ins of one identity at once: the loser finds what the winner committed.
    if (!isUniqueViolation(err)) throw err;
    return await tryOnce();
  }
}

/** The pending second factor, kept server-side: the sealed mfa_token under a second cookie's hash. */
async function storeSecondFactor(
  ctx: AppContext,
  trx: Parameters<typeof insertFlow>[0],
  provider: string,
  mfaToken: string,
  methods: string[],
  returnTo: string,
): Promise<string> {
  const browserToken = newOpaqueToken();
  const hash = hashOpaqueToken(browserToken);
  const now = Date.now();
  await insertFlow(trx, {
    browser_hash: hash,
    purpose: 'second_factor',
    provider,
    state: JSON.stringify(methods),
    nonce: '',
    verifier_box: key(ctx).seal(Buffer.from(mfaToken), sealContext(hash)),
    return_to: returnTo,
    user_id: null,
    session_id: null,
    created_at: now,
    expires_at: now + FLOW_TTL_MS,
  });
  return browserToken;
}

/**
 * `POST /api/v1/idp/continue` (hidden): the sign-in page takes the pending second factor of a provider
 * sign-in, once, and goes on exactly as after `POST /login` answered `mfa_required`.
 */
export async function takeSecondFactor(
  ctx: AppContext,
  browserToken: string | undefined,
): Promise<{ mfa_token: string; methods: string[]; return_to: string }> {
  if (!browserToken) throw spent();
  const hash = hashOpaqueToken(browserToken);
  const flow = await takeFlow(ctx.db, hash);
  if (flow?.purpose !== 'second_factor' || flow.expires_at < Date.now()) throw spent();
  const token = key(ctx).open(flow.verifier_box, sealContext(hash));
  if (token === null) throw spent();
  return {
    mfa_token: token.toString(),
    methods: JSON.parse(flow.state) as string[],
    return_to: flow.return_to,
  };
}
