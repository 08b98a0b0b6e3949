import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { findUserById, toPublicUser } from '../../../identity/index.ts';
import { callClaimsHook } from '../../../identity/tokens/claims-hook.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { resourceIndicators } from '../resources/resource-indicators.ts';
import { organizationFacts, organizationTokenClaims, type TokenOrganization } from './organization-tokens.ts';

/*
 * The claims hook (docs/api.md §21, docs/claims-hook.md) in the authorization server, through the
 * library's documented configuration only: `extraTokenClaims` adds the hook's claims to a user's
 * access tokens (client credentials are no user's: no call), and `rotateRefreshToken`, which the
 * library calls before it consumes the presented refresh token, asks the hook first on the refresh
 * grant, so a refusal leaves that token usable. A refusal under TOKEN_HOOK_FAILURE=deny answers the
 * token request RFC 6749's `server_error`.
 */

/** The hook's answer of a refresh grant, asked before the refresh token was used, by request. */
const askedBeforeRotation = new WeakMap<object, Record<string, unknown>>();

/** The library's AccessToken as extraTokenClaims sees it (the fields read here). */
interface UserAccessToken {
  kind: string;
  accountId?: string;
  grantId?: string;
  clientId?: string;
  jti?: string;
  iat?: number;
  exp?: number;
  expiration?: number;
  aud?: string | string[];
  scope?: string;
  resourceServer?: { audience?: string };
}

interface SignInFacts {
  authTime?: number;
  amr?: string[];
}

/**
 * `extraTokenClaims`: a user's access token's organization claims (`org_id`, `roles`:
 * organization-tokens.ts) and then the hook's claims, none for client credentials. The hook is told
 * the organization and sees those claims (it may not set them: they are reserved).
 */
export function extraTokenClaims(ctx: AppContext) {
  const organizationClaims = organizationTokenClaims(ctx);
  return async (
    kctx: KoaContextWithOIDC | undefined,
    token: UserAccessToken,
  ): Promise<Record<string, unknown> | undefined> => {
    const own = await organizationClaims(kctx, token);
    const hooked = await hookClaims(ctx, kctx, token);
    return own === undefined && hooked === undefined ? undefined : { ...hooked, ...own };
  };
}

/** The hook's claims for a user's access token (told its organization), none without a hook. */
async function hookClaims(
  ctx: AppContext,
  kctx: KoaContextWithOIDC | undefined,
  token: UserAccessToken,
): Promise<Record<string, unknown> | undefined> {
  if (ctx.config.tokenHook === null || token.kind !== 'AccessToken' || token.accountId === undefined) {
    return undefined;
  }
  if (kctx !== undefined) {
    const early = askedBeforeRotation.get(kctx);
    if (early !== undefined) return nonEmpty(early);
  }
  const now = Math.floor(Date.now() / 1000);
  const claims = accessClaims(ctx, kctx, {
    jti: token.jti,
    sub: token.accountId,
    iat: token.iat ?? now,
    exp: token.exp ?? now + (token.expiration ?? ctx.config.accessTokenTtlS),
    scope: token.scope,
    clientId: token.clientId,
    aud: token.resourceServer?.audience ?? (typeof token.aud === 'string' ? token.aud : undefined),
  });
  const org = await organizationFacts(
    ctx,
    kctx,
    token.accountId,
    token.grantId,
    token.resourceServer !== undefined,
  );
  Object.assign(claims, org.claims);
  return nonEmpty(await askHook(ctx, token.accountId, token.clientId ?? null, claims, org.organization));
}

/**
 * `rotateRefreshToken` around the resource check (resource-indicators.ts): once the refresh is
 * known to go ahead, and before the library consumes the token, the hook is asked for the access
 * token about to be issued, with its claims as the library will write them (its `jti` is drawn
 * only later, so it is the one claim not sent). A refusal throws here: nothing was consumed.
 */
export function rotateAfterClaimsHook(
  ctx: AppContext,
  inner: (kctx: KoaContextWithOIDC) => Promise<boolean>,
) {
  const { getResourceServerInfo } = resourceIndicators(ctx);
  return async (kctx: KoaContextWithOIDC): Promise<boolean> => {
    const rotate = await inner(kctx);
    if (ctx.config.tokenHook === null) return rotate;
    const { oidc } = kctx;
    const refresh = oidc.entities.RefreshToken as
      | { accountId: string; grantId: string; scopes: Set<string>; resource?: string | string[] }
      | undefined;
    const grant = oidc.entities.Grant as
      | {
          getResourceScopeFiltered(resource: string, scopes: string[]): string;
          getOIDCScopeFiltered(scopes: Set<string>): string;
        }
      | undefined;
    if (!refresh || !grant) return rotate;
    const asked: unknown = oidc.params?.resource;
    const resource =
      typeof asked === 'string' ? asked : typeof refresh.resource === 'string' ? refresh.resource : undefined;
    const scopes: Set<string> = oidc.params?.scope
      ? (oidc.requestParamScopes as Set<string>)
      : refresh.scopes;
    let aud: string | undefined;
    let scope: string;
    let ttlS = ctx.config.accessTokenTtlS;
    if (resource !== undefined) {
      const info = await getResourceServerInfo(kctx, resource, oidc.client as { clientId: string });
      const offered = new Set(info.scope.split(' '));
      aud = info.audience;
      ttlS = info.accessTokenTTL ?? ttlS;
      scope = grant.getResourceScopeFiltered(
        resource,
        [...scopes].filter((s) => offered.has(s)),
      );
    } else {
      scope = grant.getOIDCScopeFiltered(scopes);
    }
    const iat = Math.floor(Date.now() / 1000);
    const clientId = (oidc.client as { clientId: string }).clientId;
    const claims = accessClaims(ctx, kctx, {
      sub: refresh.accountId,
      iat,
      exp: iat + ttlS,
      scope,
      clientId,
      aud,
    });
    // The organization the refresh keeps or switches to (checked by `inner`, organization-tokens.ts).
    const org = await organizationFacts(ctx, kctx, refresh.accountId, refresh.grantId, aud !== undefined);
    Object.assign(claims, org.claims);
    askedBeforeRotation.set(kctx, await askHook(ctx, refresh.accountId, clientId, claims, org.organization));
    return rotate;
  };
}

/** The claims of a user's access token in the order the library's JWT format writes them. */
function accessClaims(
  ctx: AppContext,
  kctx: KoaContextWithOIDC | undefined,
  t: { jti?: string; sub: string; iat: number; exp: number; scope?: string; clientId?: string; aud?: string },
): Record<string, unknown> {
  const entities = kctx?.oidc?.entities as
    | { AuthorizationCode?: SignInFacts; RefreshToken?: SignInFacts }
    | undefined;
  const source = entities?.AuthorizationCode ?? entities?.RefreshToken;
  const claims: Record<string, unknown> = {
    ...(t.jti !== undefined && { jti: t.jti }),
    sub: t.sub,
    iat: t.iat,
    exp: t.exp,
    ...(t.scope ? { scope: t.scope } : {}),
    client_id: t.clientId,
    iss: ctx.config.publicUrl,
    ...(t.aud !== undefined && { aud: t.aud }),
  };
  // As the JWT customizer adds them (token-answers.ts): when and how the person signed in.
  if (source?.authTime !== undefined) claims.auth_time = source.authTime;
  if (Array.isArray(source?.amr) && source.amr.length > 0) claims.amr = source.amr;
  return claims;
}

/** Calls the hook for the account; a refusal becomes the OAuth `server_error` (RFC 6749 §5.2). */
export async function askHook(
  ctx: AppContext,
  accountId: string,
  clientId: string | null,
  claims: Record<string, unknown>,
  organization: TokenOrganization | null,
  token: 'access_token' | 'id_token' = 'access_token',
): Promise<Record<string, unknown>> {
  const user = await findUserById(ctx.db, accountId);
  if (!user) throw new errors.InvalidGrant('the account of this grant is gone');
  try {
    return await callClaimsHook(ctx, {
      token,
      user: toPublicUser(user),
      clientId,
      // An access token for the userinfo endpoint only has no audience of its own: its client's
      // (an ID token's audience is its client too).
      audience: typeof claims.aud === 'string' ? claims.aud : (clientId ?? ctx.config.publicUrl),
      organization,
      claims,
    });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'token_hook_failed') throw new HookRefused();
    throw err;
  }
}

/** The library's base error class: exported at run time, absent from its type declarations. */
const OIDCProviderError = (
  errors as unknown as {
    OIDCProviderError: new (status: number, message: string) => Error & { expose: boolean };
  }
).OIDCProviderError;

/**
 * RFC 6749's `server_error` with the status of §5.2's token errors, 400: relying-party libraries
 * (openid-client's oauth4webapi among them) read an OAuth error only from a 4xx answer, and would
 * otherwise report "unexpected status" instead of the code that says "try again later".
 */
class HookRefused extends OIDCProviderError {
  readonly error_description = 'the token could not be issued; try again later';
  constructor() {
    super(400, 'server_error');
    this.expose = true;
  }
}

function nonEmpty(claims: Record<string, unknown>): Record<string, unknown> | undefined {
  return Object.keys(claims).length === 0 ? undefined : claims;
}
