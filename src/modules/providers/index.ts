// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule"). The `idp` module's two seed endpoints call the
// ID-token sign-in and the `default` provider's discovery here; providers never calls idp.
export { checkProvidersOff } from './admin/module-in-use.ts';
// docs/api.md §23: the `sso` module's SAML endpoints and discovery stand on the providers' connections.
export { landingPage, SAML_FLOW_COOKIE, SAML_FLOW_COOKIE_PATH, samlFlowCookie } from './flow/flow-http.ts';
export { finishSamlFlow, pruneAssertionUses, requireSamlConnection } from './saml/saml-flow.service.ts';
export { spMetadataXml } from './saml/saml-sp.ts';
export {
  defaultProviderHealth,
  type IdpConfig,
  type IdTokenSignIn,
  idpConfig,
  signInWithIdToken,
} from './upstream/id-token-sign-in.service.ts';
export { LinkIdentityError, linkIdentityByOperator } from './upstream/link-identity.service.ts';
export { anyDomainClaimed, providerForDomain } from './upstream/providers.service.ts';
export { pruneIdTokenUses } from './upstream/replay.ts';
export { createUpstreams, type Upstreams } from './upstream/upstream.ts';
