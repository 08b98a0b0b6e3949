// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { type VerifiedIdentity, verifyIdToken } from './id-token.ts';
export { findLinkOrCreate } from './identity-mapping.ts';
export type { IdTokenSource } from './idp.service.ts';
export { LinkIdentityError, linkIdentityByOperator } from './link-identity.service.ts';
export { createOidcClient, type OidcClient, providerUnavailable } from './oidc-client.ts';
export { reserveIdToken } from './replay.ts';
export { provideIdTokenSources } from './sources.ts';
