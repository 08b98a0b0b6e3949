// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule"). The factors themselves (the census, mfa_tokens,
// codes, passkey assertions, the proofs' schemas) are the identity core's: src/identity/factors/,
// and fresh proofs (requireFreshProof, confirmCurrentPassword) its sign-in pipeline's.
export { MfaStatus } from './mfa.schemas.ts';
export { mfaStatus, resetUserMfaByEmail } from './mfa.service.ts';
export { checkFactorModuleOff } from './module-in-use.ts';
export { prepareResetFactor, type ResetFactorInput, refuseUnservedResetFactor } from './reset-factor.ts';
export { queueSecurityNotice } from './security-notices.ts';
