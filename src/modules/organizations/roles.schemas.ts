import { type Static, Type } from '@sinclair/typebox';

/** docs/api.md §21: a role name (never `admin` or `user`: the service checks those). */
export const ROLE_NAME = '^[a-z][a-z0-9_-]{0,62}$';
/** docs/api.md §21: a permission, usually a resource's scope (`invoices:read`). */
export const PERMISSION = '^[a-z0-9][a-z0-9_.:/-]{0,127}$';
/** Gatehouse's own permissions: any other `org:` name is refused. */
export const ORG_PERMISSIONS = ['org:members:read', 'org:members:manage', 'org:settings:manage'] as const;
export type OrgPermission = (typeof ORG_PERMISSIONS)[number];

export const RoleNameSchema = Type.String({ pattern: ROLE_NAME });
/** A list of role names as a request gives it: at most 50, no repeats. */
export const RoleNames = Type.Array(RoleNameSchema, { maxItems: 50, uniqueItems: true });

export const RoleSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  permissions: Type.Array(Type.String()),
});
export type PublicRole = Static<typeof RoleSchema>;

export const RoleList = Type.Object({ data: Type.Array(RoleSchema) });

/** Any string up to the router's limit: a name that cannot exist is a 404 (role_not_found), not a 400. */
export const RoleParams = Type.Object({ name: Type.String({ maxLength: 512 }) });

export const PutRoleBody = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 500, pattern: '^[^\\u0000-\\u001f\\u007f]*$' })),
    permissions: Type.Array(Type.String({ pattern: PERMISSION }), { maxItems: 200, uniqueItems: true }),
  },
  { additionalProperties: false },
);
export type PutRoleBody = Static<typeof PutRoleBody>;

export const UserIdParams = Type.Object({ id: Type.String({ maxLength: 512 }) });

export const UserRolesSchema = Type.Object({
  roles: Type.Array(Type.String()),
  organizations: Type.Array(
    Type.Object({ id: Type.String(), slug: Type.String(), roles: Type.Array(Type.String()) }),
  ),
});
export type UserRoles = Static<typeof UserRolesSchema>;

export const PutUserRolesBody = Type.Object({ roles: RoleNames }, { additionalProperties: false });
