// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").
export {
  EmailInput,
  EmptyBody,
  LinkTokenParams,
  MessageResponse,
  PasswordInput,
  UserEnvelope,
} from './recovery.schemas.ts';
export { emailOr400 } from './recovery.service.ts';
export { cliResetLink } from './reset-link-admin.service.ts';
export { issueResetLink } from './reset-links.ts';
