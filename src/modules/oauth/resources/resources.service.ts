import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import {
  clientsUsingResource,
  deleteResourceRow,
  findResourceByIdentifier,
  findResourceRow,
  insertResourceRow,
  listResourceRows,
  type ResourceRow,
  updateResourceRow,
} from '../clients/clients.queries.ts';
import { invalidField } from '../clients/redirect-uris.ts';
import type { ResourceCreateBody, ResourceUpdateBody } from '../oauth.schemas.ts';

/** Default lifetime of an access token for an API (docs/api.md §17). */
export const DEFAULT_RESOURCE_TTL_S = 300;

export interface PublicResource {
  id: string;
  identifier: string;
  name: string;
  scopes: Array<{ name: string; description: string }>;
  access_token_ttl_s: number;
  /** docs/api.md §21: a user grant gets only the scopes its roles grant as permissions. */
  rbac: boolean;
  created_at: string;
  updated_at: string;
}

export function toPublicResource(row: ResourceRow): PublicResource {
  return {
    id: row.id,
    identifier: row.identifier,
    name: row.name,
    scopes: JSON.parse(row.scopes) as PublicResource['scopes'],
    access_token_ttl_s: Number(row.access_token_ttl_s),
    rbac: Number(row.rbac) === 1,
    created_at: new Date(Number(row.created_at)).toISOString(),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
  };
}

const notFound = () => new ApiError('resource_not_found', { detail: 'No resource has this id' });

/** An absolute URI, never PUBLIC_URL or under it (Gatehouse's own audience is not for clients). */
function checkIdentifier(ctx: AppContext, identifier: string): void {
  let url: URL;
  try {
    url = new URL(identifier);
  } catch {
    throw invalidField('/identifier', 'must be an absolute URI');
  }
  if (identifier.includes('#')) throw invalidField('/identifier', 'must not contain a fragment');
  const own = ctx.config.publicUrl;
  if (identifier === own || identifier.startsWith(`${own}/`) || url.href === new URL(own).href) {
    throw invalidField('/identifier', "must not be Gatehouse's own PUBLIC_URL or under it");
  }
}

function checkScopes(scopes: Array<{ name: string }>): void {
  const seen = new Set<string>();
  scopes.forEach((s, i) => {
    if (seen.has(s.name)) throw invalidField(`/scopes/${i}/name`, 'is listed twice');
    if (['openid', 'profile', 'email', 'offline_access', 'organizations'].includes(s.name)) {
      throw invalidField(`/scopes/${i}/name`, 'is an OpenID scope');
    }
    seen.add(s.name);
  });
}

export async function createResource(ctx: AppContext, body: ResourceCreateBody): Promise<PublicResource> {
  checkIdentifier(ctx, body.identifier);
  const scopes = body.scopes ?? [];
  checkScopes(scopes);
  const now = Date.now();
  const id = uuidv7();
  try {
    await insertResourceRow(ctx.db, {
      id,
      identifier: body.identifier,
      name: body.name,
      scopes: JSON.stringify(scopes),
      access_token_ttl_s: body.access_token_ttl_s ?? DEFAULT_RESOURCE_TTL_S,
      rbac: body.rbac === true ? 1 : 0,
      created_at: now,
      updated_at: now,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw invalidField('/identifier', 'is already registered');
    throw err;
  }
  return getResource(ctx, id);
}

export async function listResources(ctx: AppContext): Promise<{ data: PublicResource[] }> {
  return { data: (await listResourceRows(ctx.db)).map(toPublicResource) };
}

export async function getResource(ctx: AppContext, id: string): Promise<PublicResource> {
  const row = await findResourceRow(ctx.db, id);
  if (!row) throw notFound();
  return toPublicResource(row);
}

export async function updateResource(
  ctx: AppContext,
  id: string,
  body: ResourceUpdateBody,
): Promise<PublicResource> {
  await getResource(ctx, id);
  if (body.scopes) checkScopes(body.scopes);
  await updateResourceRow(ctx.db, id, {
    ...(body.name === undefined ? {} : { name: body.name }),
    ...(body.scopes === undefined ? {} : { scopes: JSON.stringify(body.scopes) }),
    ...(body.access_token_ttl_s === undefined ? {} : { access_token_ttl_s: body.access_token_ttl_s }),
    ...(body.rbac === undefined ? {} : { rbac: body.rbac ? 1 : 0 }),
    updated_at: Date.now(),
  });
  return getResource(ctx, id);
}

/** Refused with 409 resource_in_use while a client lists it. */
export async function deleteResource(ctx: AppContext, id: string): Promise<void> {
  const resource = await getResource(ctx, id);
  const users = await clientsUsingResource(ctx.db, resource.identifier);
  if (users.length > 0) {
    throw new ApiError('resource_in_use', {
      detail: `${users.length} client(s) may ask for this resource; remove it from them first`,
    });
  }
  if (!(await deleteResourceRow(ctx.db, id))) throw notFound();
}

/**
 * Gatehouse's own API as a resource of the authorization server, built in (never stored, never
 * listed; no resource may be registered under PUBLIC_URL): `<PUBLIC_URL>/api/v1`, with one scope,
 * `api_keys:verify` (docs/api.md §22: "a key or token holding scope api_keys:verify"). An admin gives
 * a confidential client this resource and scope; its client-credentials tokens are then accepted by
 * `api_keys.verify` alone (every other endpoint still answers them 401 `token_invalid`, §17).
 */
export function ownApiResource(ctx: AppContext): PublicResource {
  return {
    id: 'gatehouse',
    identifier: ownApiIdentifier(ctx),
    name: `${ctx.config.appName} API`,
    scopes: [{ name: 'api_keys:verify', description: 'Verify API keys presented to your own API' }],
    access_token_ttl_s: DEFAULT_RESOURCE_TTL_S,
    rbac: false,
    created_at: new Date(0).toISOString(),
    updated_at: new Date(0).toISOString(),
  };
}

/** The audience of tokens for Gatehouse's own API: `<PUBLIC_URL>/api/v1`. */
export function ownApiIdentifier(ctx: AppContext): string {
  return `${ctx.config.publicUrl}/api/v1`;
}

/** The resource of an identifier (registered, or Gatehouse's own API), for the provider and clients. */
export async function resourceByIdentifier(
  ctx: AppContext,
  identifier: string,
): Promise<PublicResource | null> {
  if (identifier === ownApiIdentifier(ctx)) return ownApiResource(ctx);
  const row = await findResourceByIdentifier(ctx.db, identifier);
  return row ? toPublicResource(row) : null;
}
