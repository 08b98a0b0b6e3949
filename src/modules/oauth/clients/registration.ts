import { type AdapterPayload, errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { findClientRow, insertClientRow } from './clients.queries.ts';
import { clientPolicy, OIDC_SCOPES } from './clients.service.ts';
import { redirectUriProblem } from './redirect-uris.ts';

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/**
 * The admin API's rules for a registered client's metadata (redirect URIs, the code grant); throws
 * the library's `invalid_client_metadata`. Also run before a registration token is spent
 * (registration-tokens.service.ts), so a mistyped redirect URI does not cost the token.
 */
export function checkRegisteredMetadata(meta: AdapterPayload) {
  const applicationType = meta.application_type === 'native' ? 'native' : 'web';
  const redirectUris = list(meta.redirect_uris);
  const postLogout = list(meta.post_logout_redirect_uris);
  for (const uri of [...redirectUris, ...postLogout]) {
    const problem = redirectUriProblem(uri, applicationType);
    if (problem !== null) throw new errors.InvalidClientMetadata(`redirect URI ${problem}`);
  }
  const grantTypes = list(meta.grant_types).filter(
    (g) => g === 'authorization_code' || g === 'refresh_token',
  );
  if (!grantTypes.includes('authorization_code')) {
    throw new errors.InvalidClientMetadata('registered clients use the authorization_code grant');
  }
  return { applicationType, redirectUris, postLogout, grantTypes } as const;
}

/**
 * A client registered through RFC 7591 (docs/api.md §17, "Dynamic registration"): an ordinary client
 * with `registered: true`, never first-party, no introspection, no resources (admin-only), always
 * asked for consent; its redirect URIs follow the admin API's rules; its secret is sealed.
 */
export async function storeRegisteredClient(
  ctx: AppContext,
  clientId: string,
  meta: AdapterPayload,
): Promise<void> {
  if (await findClientRow(ctx.db, clientId)) {
    throw new errors.InvalidClientMetadata(
      'registered clients cannot be changed (RFC 7592 update is not served)',
    );
  }
  const { applicationType, redirectUris, postLogout, grantTypes } = checkRegisteredMetadata(meta);
  const method = String(meta.token_endpoint_auth_method ?? 'client_secret_basic');
  const secret = typeof meta.client_secret === 'string' ? meta.client_secret : null;
  const key = ctx.secrets.key();
  if (secret !== null && key === null) throw new Error('SECRETS_KEY is required to store client secrets');
  const oidcScopes: readonly string[] = OIDC_SCOPES;
  const asked = typeof meta.scope === 'string' ? meta.scope.split(' ') : ['openid', 'profile', 'email'];
  const now = Date.now();
  await insertClientRow(ctx.db, {
    client_id: clientId,
    name: typeof meta.client_name === 'string' ? meta.client_name.slice(0, 200) : clientId,
    type: method === 'none' ? 'public' : 'confidential',
    application_type: applicationType,
    redirect_uris: JSON.stringify(redirectUris),
    post_logout_redirect_uris: JSON.stringify(postLogout),
    grant_types: JSON.stringify(grantTypes),
    scopes: JSON.stringify(asked.filter((s) => oidcScopes.includes(s))),
    resources: '[]',
    first_party: 0,
    introspection: 0,
    registered: 1,
    pkce_required: 1,
    token_endpoint_auth_method: method,
    secret_box:
      secret === null || key === null ? null : key.seal(Buffer.from(secret), `oauth_client:${clientId}`),
    created_at: now,
    updated_at: now,
  });
}

/**
 * The RFC 7592 read shows the client's scopes as Gatehouse stores them. The library's client
 * metadata holds its OpenID scopes only (its `scope` must list scopes it knows; an API's scopes are
 * granted per resource, authorization-server.ts), so its answer would hide an API scope an admin gave the
 * client: the read's `scope` is replaced by the stored list (a documented post-middleware).
 */
export function registrationReadScopes(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    if (kctx.oidc?.route !== 'client' || kctx.status !== 200) return;
    const body = kctx.body as { client_id?: unknown; scope?: unknown } | undefined;
    if (typeof body?.client_id !== 'string') return;
    const scopes = (await clientPolicy(ctx, body.client_id))?.scopes ?? [];
    if (scopes.length > 0) body.scope = scopes.join(' ');
  };
}
