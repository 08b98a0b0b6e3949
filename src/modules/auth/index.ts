// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { TokenResponse } from './auth.schemas.ts';
export { invalidCredentials } from './auth.service.ts';
export { createOrPromoteAdmin, DEFAULT_ADMIN_EMAIL, removeUnusedFirstAdmin } from './first-admin.ts';
