import * as oidc from 'openid-client';
import { ApiError } from '../../../platform/api-error.ts';
import { displayName, hasControlCharacter, type VerifiedIdentity } from './id-token.ts';
import { providerUnavailable } from './oidc-client.ts';

/*
 * OpenID Connect Core 5.4: a provider may hand the `email` and `profile` claims out only at its
 * userinfo endpoint (oidc-provider's default `conformIdTokenClaims`: a Gatehouse, Logto or
 * node-oidc-provider upstream does). When the verified ID token lacks a claim the mapping needs,
 * the userinfo answer fills it in, read through openid-client's `fetchUserInfo`, which checks the
 * answer's `sub` against the ID token's (Core 5.3.2: otherwise the answer "MUST NOT be used").
 */

/** Whether the mapping (docs/api.md §16: an address to link or provision, a name for a new account) lacks a claim. */
export function lacksMappedClaims(identity: VerifiedIdentity): boolean {
  return identity.email === null || identity.name === null;
}

const refused = (reason: string, cause?: unknown) =>
  new ApiError('idp_token_invalid', { detail: `Userinfo rejected: ${reason}`, cause });

/**
 * The identity with the claims its ID token lacked taken from the provider's userinfo. The ID token's
 * own claims win; an address comes with its own `email_verified`, never the ID token's. A provider
 * without a userinfo endpoint, or an identity that lacks nothing, is returned as it is.
 */
export async function withUserinfo(
  config: oidc.Configuration,
  identity: VerifiedIdentity,
  accessToken: string,
): Promise<VerifiedIdentity> {
  if (!lacksMappedClaims(identity) || config.serverMetadata().userinfo_endpoint === undefined) {
    return identity;
  }
  let claims: oidc.UserInfoResponse;
  try {
    claims = await oidc.fetchUserInfo(config, accessToken, identity.subject);
  } catch (err) {
    throw userinfoError(err);
  }
  for (const claim of ['email', 'name', 'given_name', 'family_name'] as const) {
    const value = claims[claim];
    if (typeof value === 'string' && hasControlCharacter(value)) {
      throw refused(`the ${claim} claim contains a control character`);
    }
  }
  const completed = { ...identity };
  if (completed.email === null && typeof claims.email === 'string') {
    completed.email = claims.email;
    completed.emailVerified = claims.email_verified === true;
  }
  completed.name ??= displayName(claims);
  return completed;
}

function userinfoError(err: unknown): unknown {
  if (err instanceof oidc.ClientError && err.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
    return refused("its sub is not the ID token's");
  }
  if (err instanceof oidc.WWWAuthenticateChallengeError || err instanceof oidc.ResponseBodyError) {
    return refused('the provider refused the access token');
  }
  if (err instanceof oidc.ClientError) return refused('the answer failed a check', err);
  return providerUnavailable('the userinfo request failed', err);
}
