// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").
export { createKey, listKeys, revokeKey, revokeOwnerKeys } from './api-keys.service.ts';
export { KEY_SCAN_REGEX, looksLikeKey } from './key-format.ts';
export { authenticateKey } from './key-use.service.ts';
export { createServiceAccount } from './service-accounts.service.ts';
