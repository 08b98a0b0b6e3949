import type { KoaContextWithOIDC } from 'oidc-provider';

/*
 * Answers of the token endpoints as relying-party libraries expect them (docs/api.md §17), through
 * the library's documented extension points: post-middlewares (`provider.use`) and the JWT format's
 * customizer (`formats.customizers.jwt`).
 */

/**
 * RFC 7009 §2.2 allows any body; libraries that parse every answer as JSON (Authlib, some fetch
 * wrappers) failed on the library's empty one. A successful revocation answers `{}` as JSON.
 */
export function revocationAnswersJson() {
  return async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    if (kctx.oidc?.route === 'revocation' && kctx.status === 200 && (kctx.body === '' || kctx.body == null)) {
      kctx.body = {};
    }
  };
}

/**
 * A resource's JWT access token is stateless: Gatehouse cannot say it is active, so introspection
 * answers an authenticated client `{"active": false}` (RFC 7662 §2.2) where the library refuses
 * structured tokens with 400 `unsupported_token_type`. Client authentication ran first: a caller
 * that failed it keeps its `invalid_client`. Revocation keeps the refusal (the token cannot end).
 */
export function introspectionOfJwtInactive() {
  return async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const body = kctx.body as { error?: unknown } | undefined;
    if (kctx.oidc?.route !== 'introspection' || kctx.status !== 400) return;
    if (body?.error !== 'unsupported_token_type') return;
    kctx.status = 200;
    kctx.body = { active: false };
  };
}

interface SignInFacts {
  authTime?: number;
  amr?: string[];
}

/**
 * RFC 9068 §2.2.1: a resource's JWT of a user grant says when (`auth_time`) and how (`amr`) the
 * person signed in, from the code or refresh token it was issued for (the library copies both
 * from the sign-in). Client credentials have no user: neither claim.
 */
export async function userSignInClaims(
  kctx: KoaContextWithOIDC | undefined,
  token: { accountId?: string },
  jwt: { payload: Record<string, unknown> },
): Promise<void> {
  if (token.accountId === undefined) return;
  const entities = kctx?.oidc?.entities as
    | { AuthorizationCode?: SignInFacts; RefreshToken?: SignInFacts }
    | undefined;
  const source = entities?.AuthorizationCode ?? entities?.RefreshToken;
  if (source?.authTime !== undefined) jwt.payload.auth_time = source.authTime;
  if (Array.isArray(source?.amr) && source.amr.length > 0) jwt.payload.amr = source.amr;
}
