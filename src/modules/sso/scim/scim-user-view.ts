import { normalizeEmail } from '../../../identity/index.ts';
import type { UserView } from './scim.queries.ts';
import { invalidSyntax, invalidValue } from './scim-errors.ts';

/* The SCIM User resource (RFC 7643 §4.1) as Gatehouse keeps it, and what is read of one sent to it. */

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const NAME_MAX = 200;

export interface ScimUser {
  schemas: string[];
  id: string;
  externalId?: string;
  userName: string;
  name: { formatted: string };
  displayName: string;
  active: boolean;
  emails: Array<{ value: string; type: 'work'; primary: true }>;
  meta: { resourceType: 'User'; created: string; lastModified: string; location: string };
}

const iso = (ms: number | string): string => new Date(Number(ms)).toISOString();

/** The base URL of SCIM resources: `<PUBLIC_URL>/scim/v2`. */
export const scimBase = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, '')}/scim/v2`;

/**
 * A user as SCIM shows it: `id` is the Gatehouse user id, `userName` the address; `active` while a
 * member whose account is active.
 */
export function toScimUser(v: UserView, base: string): ScimUser {
  const updated = Math.max(Number(v.updated_at), Number(v.scim_updated_at ?? 0));
  return {
    schemas: [USER_SCHEMA],
    id: v.id,
    ...(v.external_id !== null && v.external_id !== undefined && { externalId: v.external_id }),
    userName: v.email,
    name: { formatted: v.name },
    displayName: v.name,
    active: v.joined_at !== null && v.joined_at !== undefined && v.status === 'active',
    emails: [{ value: v.email, type: 'work', primary: true }],
    meta: {
      resourceType: 'User',
      created: iso(v.created_at),
      lastModified: iso(updated),
      location: `${base}/Users/${v.id}`,
    },
  };
}

/** What Gatehouse reads of a User sent to it; a `password` and anything else is ignored. */
export interface UserInput {
  email: string;
  /** null: the body names no one (keep the account's name). */
  name: string | null;
  externalId: string | null;
  active: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Attribute names are case-insensitive (RFC 7643 §2.1): the value of `key` in any case. */
export function attr(o: Record<string, unknown>, key: string): unknown {
  const lower = key.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** `active` as Okta and Entra ID send it: a boolean, or "True"/"False" in any case. */
export function readActive(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue('active must be a boolean');
}

/** `name.formatted`, else `displayName`, else given plus family name (docs/api.md §23); null when none. */
export function readName(body: Record<string, unknown>): string | null {
  const name = attr(body, 'name');
  const n = isObject(name) ? name : {};
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
  const joined = [str(attr(n, 'givenName')), str(attr(n, 'familyName'))].filter((x) => x !== null).join(' ');
  const chosen =
    str(attr(n, 'formatted')) ?? str(attr(body, 'displayName')) ?? (joined === '' ? null : joined);
  if (
    chosen !== null &&
    (chosen.length > NAME_MAX || [...chosen].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127))
  ) {
    throw invalidValue(`name must be at most ${NAME_MAX} characters without control characters`);
  }
  return chosen;
}

/** The e-mail of `userName`, normalized; 400 invalidValue when it is no address. */
export function readUserName(value: unknown): string {
  if (typeof value !== 'string') throw invalidValue('userName is required and must be an e-mail address');
  const email = normalizeEmail(value);
  if (email === null) throw invalidValue('userName must be an e-mail address');
  return email;
}

/** A User body of POST or PUT. */
export function readUserInput(body: unknown): UserInput {
  if (!isObject(body)) throw invalidSyntax('The body must be a SCIM User object');
  const externalId = attr(body, 'externalId');
  if (
    externalId !== undefined &&
    externalId !== null &&
    (typeof externalId !== 'string' || externalId.length > 256)
  ) {
    throw invalidValue('externalId must be a string of at most 256 characters');
  }
  return {
    email: readUserName(attr(body, 'userName')),
    name: readName(body),
    externalId: typeof externalId === 'string' ? externalId : null,
    active: readActive(attr(body, 'active')),
  };
}
