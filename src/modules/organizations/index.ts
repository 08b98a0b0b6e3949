// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").
export {
  globalRolesOf,
  holdsPermission,
  membershipIn,
  membershipsOf,
  type OrgMembership,
  permissionsOf,
} from './reads.ts';
