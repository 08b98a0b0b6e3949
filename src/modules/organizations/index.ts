// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

// docs/api.md §23: SCIM provisioning (module sso) changes members through these; its token
// endpoints decide access like organizations' own.
export { orgAccess, requirePermission } from './access.ts';
export { callerOf } from './caller.ts';
// The api_keys module (docs/api.md §22): the organization object of a verify answer, and a new
// service account's global roles.
export { toPublicOrganization } from './organizations.service.ts';
// docs/api.md §23: SSO connections provision people into their organization.
export { joinProvisioned } from './provisioning.ts';
export {
  globalRolesOf,
  holdsPermission,
  membershipIn,
  membershipsOf,
  type OrgMembership,
  permissionsOf,
} from './reads.ts';
export { putUserRoles } from './roles.service.ts';
export {
  type ScimOrganization,
  scimJoin,
  scimLeave,
  scimMemberRoles,
  scimOrganization,
  scimSetRoles,
} from './scim-roles.ts';
// docs/api.md §23: the sso module's sign-in check asks whether a domain's organization requires SSO.
export { ssoRequiredAt } from './sso-required.ts';
