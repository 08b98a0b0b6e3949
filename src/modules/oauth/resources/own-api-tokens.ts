import { decodeJwt } from 'jose';
import { type AuthContext, clientCallerContext } from '../../../http/guard.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { clientPolicy } from '../clients/clients.service.ts';
import { ownApiIdentifier } from './resources.service.ts';

/*
 * OAuth clients' access tokens for Gatehouse's own API (resources.service.ts, ownApiResource):
 * RFC 9068 JWTs with `aud` = `<PUBLIC_URL>/api/v1`, accepted only by endpoints that declare
 * `oauthClients` (api_keys.verify, docs/api.md §22). The token is stateless, so its client is read
 * on every use: a deleted client, or one an admin took the resource or scope from, is refused at
 * once rather than when the token expires.
 */

/** Whether a bearer token is meant as such a token: a JWT whose (not yet verified) `aud` is the API's. */
export function isOwnApiToken(ctx: AppContext, token: string): boolean {
  if (token.split('.').length !== 3) return false;
  try {
    return decodeJwt(token).aud === ownApiIdentifier(ctx);
  } catch {
    return false;
  }
}

/** The client's caller (its granted scopes that it still holds), or the 401 that says why not. */
export async function authenticateOwnApiToken(ctx: AppContext, token: string): Promise<AuthContext> {
  if (!ctx.modules.isEnabled('oauth')) {
    throw new ApiError('token_invalid', { detail: 'The oauth module is disabled' });
  }
  const identifier = ownApiIdentifier(ctx);
  const claims = await ctx.accessTokens.verifyFor(token, identifier);
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : null;
  const policy = clientId === null ? null : await clientPolicy(ctx, clientId);
  if (clientId === null || policy === null || !policy.resources.includes(identifier)) {
    throw new ApiError('token_invalid', { detail: 'The client of this token may no longer call this API' });
  }
  const granted = String(claims.scope ?? '')
    .split(' ')
    .filter((scope) => scope !== '' && policy.scopes.includes(scope));
  return clientCallerContext(token, { id: clientId, scopes: granted });
}
