import { type Static, Type } from '@sinclair/typebox';
import { ApiError } from '../platform/api-error.ts';
import type { UserRow } from '../platform/db/schema.ts';
import { canonicalTag } from '../platform/i18n/index.ts';

/** `locale` in a request body: a BCP 47 tag (checked and canonicalised by localeOr400) or null. */
export const LocaleInput = Type.Union([Type.String({ maxLength: 35 }), Type.Null()]);

/**
 * A body's `locale` canonicalised (`de-ch` → `de-CH`; any well-formed language, not only the served
 * ones: the person's language outlives this service's catalogs), null kept; else 400.
 */
export function localeOr400(value: string | null): string | null {
  if (value === null) return null;
  const tag = canonicalTag(value);
  if (tag === null) {
    throw new ApiError('validation_failed', {
      detail: 'body/locale must be a BCP 47 language tag such as de or pt-BR, or null',
      errors: [{ path: '/locale', message: 'must be a BCP 47 language tag or null' }],
    });
  }
  return tag;
}

/** The user object of docs/api.md §5: never a password hash, never token material. */
export const UserSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    // null for a service account (docs/api.md §22), which has no e-mail.
    email: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
    status: Type.Union([Type.Literal('active'), Type.Literal('invited'), Type.Literal('disabled')]),
    email_verified: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    last_login_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    kind: Type.Union([Type.Literal('person'), Type.Literal('service')]),
    /** The person's language (docs/languages.md): a BCP 47 tag or null. */
    locale: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type UserSchema = Static<typeof UserSchema>;

export type PublicUser = Static<typeof UserSchema>;

/** Maps a row to the public user object (the only way a user leaves the service). */
export function toPublicUser(row: UserRow): PublicUser {
  return {
    id: row.id,
    // A service account's column holds `service:<id>`, never an address (the api_keys migration).
    email: row.kind === 'service' ? null : row.email,
    name: row.name,
    role: row.role,
    status: row.status,
    email_verified: row.email_verified === 1,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_login_at: row.last_login_at === null ? null : iso(row.last_login_at),
    kind: row.kind,
    locale: row.locale ?? null,
  };
}

/** Epoch milliseconds to ISO 8601 UTC with milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The token response of docs/api.md §5 (login, refresh, invitation set-password, idp verify). */
export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  refresh_expires_in: Type.Integer(),
  user: UserSchema,
});
export type TokenResponse = Static<typeof TokenResponse>;

/**
 * docs/api.md §22: a service account has no e-mail, password or factors, so the endpoints that
 * would give it one (an admin's e-mail or password set, a reset link, an invitation, a second-factor
 * reset) answer 400 `validation_failed` for it.
 */
export function refuseServiceAccount(user: Pick<UserRow, 'kind'>, what: string): void {
  if (user.kind === 'service') {
    throw new ApiError('validation_failed', {
      detail: `A service account has no ${what}`,
      errors: [{ path: '', message: `a service account has no ${what}` }],
    });
  }
}
