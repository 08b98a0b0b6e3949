import { randomBytes } from 'node:crypto';
import type { AdapterPayload } from 'oidc-provider';
import { revokeClientSessions } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { ClientCreateBody, ClientUpdateBody } from '../oauth.schemas.ts';
import { resourceByIdentifier } from '../resources/resources.service.ts';
import {
  type ClientRow,
  deleteClientRow,
  findClientRow,
  insertClientRow,
  listClientRows,
  updateClientRow,
} from './clients.queries.ts';
import { checkRedirectUris, invalidField } from './redirect-uris.ts';

/** The OpenID scopes Gatehouse knows (docs/oauth.md); an API's own scopes come with its resource. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'organizations'] as const;

export interface PublicClient {
  client_id: string;
  name: string;
  type: 'confidential' | 'public';
  application_type: 'web' | 'native';
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: string[];
  scopes: string[];
  resources: string[];
  first_party: boolean;
  introspection: boolean;
  registered: boolean;
  pkce_required: boolean;
  token_endpoint_auth_method: string;
  created_at: string;
  updated_at: string;
}

const list = (text: string) => JSON.parse(text) as string[];
const iso = (ms: number) => new Date(Number(ms)).toISOString();

export function toPublicClient(row: ClientRow): PublicClient {
  return {
    client_id: row.client_id,
    name: row.name,
    type: row.type,
    application_type: row.application_type,
    redirect_uris: list(row.redirect_uris),
    post_logout_redirect_uris: list(row.post_logout_redirect_uris),
    grant_types: list(row.grant_types),
    scopes: list(row.scopes),
    resources: list(row.resources),
    first_party: row.first_party === 1,
    introspection: row.introspection === 1,
    registered: row.registered === 1,
    pkce_required: row.pkce_required !== 0,
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const notFound = () => new ApiError('client_not_found', { detail: 'No client has this id' });
const secretContext = (clientId: string) => `oauth_client:${clientId}`;

function sealSecret(ctx: AppContext, clientId: string, secret: string): string {
  const key = ctx.secrets.key();
  if (key === null) {
    throw new ApiError('module_unavailable', {
      detail: 'SECRETS_KEY must be set: client secrets are stored sealed with it',
    });
  }
  return key.seal(Buffer.from(secret), secretContext(clientId));
}

/** The decisions every create and update shares: a coherent client, or 400 naming the field. */
async function checkClient(
  ctx: AppContext,
  c: Omit<PublicClient, 'client_id' | 'created_at' | 'updated_at' | 'registered' | 'name'>,
) {
  if (c.type === 'public' && c.token_endpoint_auth_method !== 'none') {
    throw invalidField('/token_endpoint_auth_method', 'must be none for a public client');
  }
  if (c.type === 'confidential' && c.token_endpoint_auth_method === 'none') {
    throw invalidField(
      '/token_endpoint_auth_method',
      'must be client_secret_basic or client_secret_post for a confidential client',
    );
  }
  // docs/api.md §17 (RFC 9700 §2.1.1): only a client that authenticates may go without PKCE; it
  // then needs a nonce on every OpenID request (provider.ts).
  if (!c.pkce_required && c.type !== 'confidential') {
    throw invalidField('/pkce_required', 'may be false for a confidential client only');
  }
  if (c.type === 'public' && c.grant_types.includes('client_credentials')) {
    throw invalidField('/grant_types', 'client_credentials needs a confidential client');
  }
  if (c.grant_types.includes('refresh_token') && !c.grant_types.includes('authorization_code')) {
    throw invalidField('/grant_types', 'refresh_token comes with authorization_code');
  }
  if (c.grant_types.includes('authorization_code') && c.redirect_uris.length === 0) {
    throw invalidField('/redirect_uris', 'needs at least one URI for the authorization_code grant');
  }
  checkRedirectUris('redirect_uris', c.redirect_uris, c.application_type);
  checkRedirectUris('post_logout_redirect_uris', c.post_logout_redirect_uris, c.application_type);
  const apiScopes = new Set<string>();
  for (const [i, identifier] of c.resources.entries()) {
    const resource = await resourceByIdentifier(ctx, identifier);
    if (!resource) throw invalidField(`/resources/${i}`, 'is not a registered resource identifier');
    for (const s of resource.scopes) apiScopes.add(s.name);
  }
  for (const [i, scope] of c.scopes.entries()) {
    if (!(OIDC_SCOPES as readonly string[]).includes(scope) && !apiScopes.has(scope)) {
      throw invalidField(`/scopes/${i}`, 'is neither an OpenID scope nor a scope of one of its resources');
    }
  }
}

export async function createClient(
  ctx: AppContext,
  body: ClientCreateBody,
  options: { registered?: boolean } = {},
): Promise<PublicClient & { client_secret?: string }> {
  const type = body.type ?? 'confidential';
  const fields = {
    type,
    application_type: body.application_type ?? 'web',
    redirect_uris: body.redirect_uris ?? [],
    post_logout_redirect_uris: body.post_logout_redirect_uris ?? [],
    grant_types: body.grant_types ?? ['authorization_code', 'refresh_token'],
    scopes: body.scopes ?? ['openid', 'profile', 'email'],
    resources: body.resources ?? [],
    first_party: body.first_party ?? false,
    introspection: body.introspection ?? false,
    pkce_required: body.pkce_required ?? true,
    token_endpoint_auth_method:
      body.token_endpoint_auth_method ?? (type === 'public' ? 'none' : 'client_secret_basic'),
  };
  await checkClient(ctx, fields);
  // Hex, so an id never starts with '-' (it is typed as a command-line argument: `clients delete <id>`).
  const clientId = newClientId();
  const secret = type === 'confidential' ? randomBytes(32).toString('base64url') : null;
  const now = Date.now();
  await insertClientRow(ctx.db, {
    client_id: clientId,
    name: body.name,
    type,
    application_type: fields.application_type,
    redirect_uris: JSON.stringify(fields.redirect_uris),
    post_logout_redirect_uris: JSON.stringify(fields.post_logout_redirect_uris),
    grant_types: JSON.stringify(fields.grant_types),
    scopes: JSON.stringify(fields.scopes),
    resources: JSON.stringify(fields.resources),
    first_party: fields.first_party ? 1 : 0,
    introspection: fields.introspection ? 1 : 0,
    registered: options.registered ? 1 : 0,
    pkce_required: fields.pkce_required ? 1 : 0,
    token_endpoint_auth_method: fields.token_endpoint_auth_method,
    secret_box: secret === null ? null : sealSecret(ctx, clientId, secret),
    created_at: now,
    updated_at: now,
  });
  const row = await findClientRow(ctx.db, clientId);
  return { ...toPublicClient(row!), ...(secret === null ? {} : { client_secret: secret }) };
}

export async function listClients(ctx: AppContext): Promise<{ data: PublicClient[] }> {
  return { data: (await listClientRows(ctx.db)).map(toPublicClient) };
}

export async function getClient(ctx: AppContext, clientId: string): Promise<PublicClient> {
  const row = await findClientRow(ctx.db, clientId);
  if (!row) throw notFound();
  return toPublicClient(row);
}

export async function updateClient(
  ctx: AppContext,
  clientId: string,
  body: ClientUpdateBody,
): Promise<PublicClient> {
  const current = await getClient(ctx, clientId);
  const next = { ...current, ...body };
  await checkClient(ctx, next);
  await updateClientRow(ctx.db, clientId, {
    name: next.name,
    application_type: next.application_type,
    redirect_uris: JSON.stringify(next.redirect_uris),
    post_logout_redirect_uris: JSON.stringify(next.post_logout_redirect_uris),
    grant_types: JSON.stringify(next.grant_types),
    scopes: JSON.stringify(next.scopes),
    resources: JSON.stringify(next.resources),
    first_party: next.first_party ? 1 : 0,
    introspection: next.introspection ? 1 : 0,
    pkce_required: next.pkce_required ? 1 : 0,
    token_endpoint_auth_method: next.token_endpoint_auth_method,
    updated_at: Date.now(),
  });
  return getClient(ctx, clientId);
}

export async function deleteClient(ctx: AppContext, clientId: string): Promise<void> {
  const deleted = await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteClientRow(trx, clientId))) return false;
    // Its grants are sessions (docs/api.md §17): they end with it rather than linger in the lists.
    await revokeClientSessions(trx, null, clientId, 'client_deleted');
    return true;
  });
  if (!deleted) throw notFound();
}

/** A new secret for a confidential client; the old one stops working at once. */
export async function rotateClientSecret(
  ctx: AppContext,
  clientId: string,
): Promise<PublicClient & { client_secret: string }> {
  const current = await getClient(ctx, clientId);
  if (current.type !== 'confidential') {
    throw new ApiError('validation_failed', { detail: 'A public client has no secret' });
  }
  const secret = randomBytes(32).toString('base64url');
  await updateClientRow(ctx.db, clientId, {
    secret_box: sealSecret(ctx, clientId, secret),
    updated_at: Date.now(),
  });
  return { ...(await getClient(ctx, clientId)), client_secret: secret };
}

/** The client as oidc-provider reads it (its metadata names), the secret opened for its comparison. */
/**
 * The response modes served (docs/api.md §17: code flow, `query` and `form_post`). The library
 * registers `fragment` too; every client's metadata leaves it out, so a request for it is refused.
 */
export const RESPONSE_MODES = ['query', 'form_post'] as const;

export async function providerClientMetadata(
  ctx: AppContext,
  clientId: string,
): Promise<AdapterPayload | undefined> {
  const row = await findClientRow(ctx.db, clientId);
  if (!row) return undefined;
  const c = toPublicClient(row);
  let secret: string | undefined;
  if (row.secret_box !== null) {
    const opened = ctx.secrets.key()?.open(row.secret_box, secretContext(clientId)) ?? null;
    // A secret sealed under another key cannot be compared: the client cannot authenticate.
    if (opened === null) return undefined;
    secret = opened.toString();
  }
  const oidcScopes = c.scopes.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s));
  return {
    client_id: c.client_id,
    ...(secret === undefined ? {} : { client_secret: secret }),
    client_name: c.name,
    application_type: c.application_type,
    redirect_uris: c.redirect_uris,
    post_logout_redirect_uris: c.post_logout_redirect_uris,
    grant_types: c.grant_types,
    response_types: c.grant_types.includes('authorization_code') ? ['code'] : [],
    response_modes: [...RESPONSE_MODES],
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    id_token_signed_response_alg: 'RS256',
    // ID tokens always say when the person signed in (OIDC Core 2, `require_auth_time`).
    require_auth_time: true,
    // Present only when an admin turned PKCE off (docs/api.md §17): authorization-server.ts reads it in
    // `pkce.required` and asks for a nonce instead; no other client ever carries it.
    ...(c.pkce_required ? {} : { pkce_required: false }),
    // The OpenID scopes it may ask for; an API's scopes are granted per resource (authorization-server.ts).
    // None: the library wants the property absent rather than empty; a client without OpenID
    // scopes is one of client credentials, which asks for an API's scopes only.
    ...(oidcScopes.length > 0 ? { scope: oidcScopes.join(' ') } : {}),
  };
}

/** Gatehouse's own view of a client (first-party, introspection, resources), or null. */
export async function clientPolicy(ctx: AppContext, clientId: string): Promise<PublicClient | null> {
  const row = await findClientRow(ctx.db, clientId);
  return row ? toPublicClient(row) : null;
}

/** A new client id: 128 random bits in hex (the library's registrations use it too). */
export function newClientId(): string {
  return randomBytes(16).toString('hex');
}
