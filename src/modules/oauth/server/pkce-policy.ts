import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/*
 * PKCE for every client, unless an admin registered a confidential client with
 * `"pkce_required": false` (docs/api.md §17, RFC 9700 §2.1.1: relying parties that cannot send
 * PKCE, such as passport-openidconnect). Such a client must send a `nonce` with every OpenID
 * request instead, else `invalid_request`. All through the library's documented options:
 * `extraClientMetadata` carries the admin's choice on the client (clients.service.ts puts it there
 * only when false), `pkce.required` reads it, and `extraParams`' validator asks for the nonce.
 */

interface PkceClient {
  clientAuthMethod?: string;
  pkce_required?: unknown;
}

/** True unless the client is a confidential one an admin let go without PKCE. */
function pkceRequired(_kctx: unknown, client: PkceClient): boolean {
  return client.clientAuthMethod === 'none' || client.pkce_required !== false;
}

/**
 * `pkce_required` is admin-only: a client registering itself (RFC 7591) may not send it, and an
 * admin's value is a boolean. The library calls this on every client it builds (synchronously).
 */
function validateClientMetadata(kctx: KoaContextWithOIDC | undefined, key: string, value: unknown): void {
  if (key !== 'pkce_required' || value === undefined) return;
  if (kctx?.oidc?.route === 'registration') {
    throw new errors.InvalidClientMetadata('pkce_required is set by an administrator only');
  }
  if (typeof value !== 'boolean') throw new errors.InvalidClientMetadata('pkce_required must be a boolean');
}

/** A client without PKCE must bind its ID token to the request with a nonce (OIDC Core 3.1.2.1). */
async function nonceWithoutPkce(kctx: KoaContextWithOIDC, value: unknown, client: PkceClient): Promise<void> {
  if (client?.pkce_required !== false) return;
  const scope = String(kctx.oidc?.params?.scope ?? '').split(' ');
  if (scope.includes('openid') && (typeof value !== 'string' || value === '')) {
    throw new errors.InvalidRequest('nonce is required for a client registered without PKCE');
  }
}

/** The configuration entries of the policy (provider.ts spreads them in). */
export const pkceConfiguration = {
  pkce: { required: pkceRequired },
  extraClientMetadata: { properties: ['pkce_required'], validator: validateClientMetadata },
  extraParams: { nonce: nonceWithoutPkce },
};
