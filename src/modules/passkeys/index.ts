// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").
export {
  type CheckedAssertion,
  checkAssertion,
  passkeyFactor,
  recordAssertion,
  refuseWhilePasskeysOff,
} from './passkey-factor.ts';
export { PasskeyProof, WebauthnResponse } from './passkey-proof.schemas.ts';
