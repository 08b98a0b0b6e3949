// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule"). The `idp` module's two seed endpoints call the
// ID-token sign-in and the `default` provider's discovery here; providers never calls idp.
export { checkProvidersOff } from './admin/module-in-use.ts';
export {
  defaultProviderHealth,
  type IdpConfig,
  type IdTokenSignIn,
  idpConfig,
  signInWithIdToken,
} from './upstream/id-token-sign-in.service.ts';
export { LinkIdentityError, linkIdentityByOperator } from './upstream/link-identity.service.ts';
export { pruneIdTokenUses } from './upstream/replay.ts';
export { createUpstreams, type Upstreams } from './upstream/upstream.ts';
