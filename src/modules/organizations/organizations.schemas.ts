import { type Static, Type } from '@sinclair/typebox';
import { RoleNames } from './roles.schemas.ts';

/** docs/api.md §21: 1–200 characters, no control characters. */
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
export const SLUG = '^[a-z0-9](-?[a-z0-9])*$';
const Slug = Type.String({ minLength: 1, maxLength: 63, pattern: SLUG });
/** An e-mail domain (lower case, at least two labels); normalised to lower case before the check. */
export const DOMAIN = '^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$';
const Domains = Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 100 });
const Metadata = Type.Record(Type.String(), Type.Unknown());
/** docs/api.md §23: a SCIM group's displayName → the roles its members hold there (admin-only). */
const ScimGroupRoles = Type.Record(Type.String({ minLength: 1, maxLength: 200 }), RoleNames, {
  maxProperties: 200,
});

const fields = {
  name: Name,
  slug: Slug,
  domains: Domains,
  join_by_domain: Type.Boolean(),
  default_roles: RoleNames,
  require_mfa: Type.Boolean(),
  metadata: Metadata,
  scim_group_roles: ScimGroupRoles,
  sso_required: Type.Boolean(),
};

export const CreateOrganizationBody = Type.Object(
  {
    name: fields.name,
    slug: Type.Optional(fields.slug),
    domains: Type.Optional(fields.domains),
    join_by_domain: Type.Optional(fields.join_by_domain),
    default_roles: Type.Optional(fields.default_roles),
    require_mfa: Type.Optional(fields.require_mfa),
    metadata: Type.Optional(fields.metadata),
    scim_group_roles: Type.Optional(fields.scim_group_roles),
    sso_required: Type.Optional(fields.sso_required),
  },
  { additionalProperties: false },
);
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const UpdateOrganizationBody = Type.Partial(Type.Object(fields), {
  additionalProperties: false,
  minProperties: 1,
});
export type UpdateOrganizationBody = Static<typeof UpdateOrganizationBody>;

export const OrganizationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  domains: Type.Array(Type.String()),
  join_by_domain: Type.Boolean(),
  default_roles: Type.Array(Type.String()),
  require_mfa: Type.Boolean(),
  metadata: Metadata,
  scim_group_roles: Type.Record(Type.String(), Type.Array(Type.String())),
  /** docs/api.md §23, admin-only like `domains`. */
  sso_required: Type.Boolean(),
  member_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** In a member's own list: their roles there. */
  roles: Type.Optional(Type.Array(Type.String())),
});
export type PublicOrganization = Static<typeof OrganizationSchema>;

export const OrganizationPage = Type.Object({
  data: Type.Array(OrganizationSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type OrganizationPage = Static<typeof OrganizationPage>;

export const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 20 });
export const Cursor = Type.String({ minLength: 1, maxLength: 1024 });

export const ListQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$' })),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ListQuery = Static<typeof ListQuery>;

/** Any string up to the router's limit: an id that cannot exist is 404 organization_not_found. */
export const OrganizationParams = Type.Object({ id: Type.String({ maxLength: 512 }) });
