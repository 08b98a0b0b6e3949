// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

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
