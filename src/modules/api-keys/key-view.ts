import { iso } from '../../identity/index.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { ApiKeyRow } from './api-keys.queries.ts';
import type { PublicApiKey } from './api-keys.schemas.ts';

/** The key object of docs/api.md §22 from its row: never the secret, never its hash. */
export function toPublicKey(row: ApiKeyRow): PublicApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    owner: { type: row.owner_type, id: row.owner_id },
    scopes: scopesOf(row),
    expires_at: row.expires_at === null ? null : iso(Number(row.expires_at)),
    rate_limit:
      row.rate_requests === null || row.rate_window_s === null
        ? null
        : { requests: row.rate_requests, window_s: row.rate_window_s },
    last_used_at: row.last_used_at === null ? null : iso(Number(row.last_used_at)),
    created_at: iso(Number(row.created_at)),
    created_by: { id: row.created_by },
  };
}

/** The stored scopes (null: the owner's reach). */
export function scopesOf(row: Pick<ApiKeyRow, 'scopes'>): string[] | null {
  return row.scopes === null ? null : (JSON.parse(row.scopes) as string[]);
}

/** What an event and an audit entry say of a key (docs/api.md §22, "Events"). */
export function eventView(row: ApiKeyRow) {
  const k = toPublicKey(row);
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    owner: k.owner,
    scopes: k.scopes,
    expires_at: k.expires_at,
  };
}

/** 404 `api_key_not_found`: unknown, revoked, or not the caller's to see (no enumeration). */
export const keyNotFound = () => new ApiError('api_key_not_found', { detail: 'No such API key' });
