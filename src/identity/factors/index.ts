// The factors of the identity core (docs/architecture.md): which second factors an account holds
// and may use (the census), mfa_tokens, TOTP and recovery codes, passkey assertions, and the
// proofs' schemas. The `mfa` and `passkeys` modules keep only their enrolment and management
// endpoints; every sign-in and every change that asks for a proof checks it here.

export { activeAdminFactors, countAccountsWithFactors } from './census.queries.ts';
export { canSignIn, type FactorModules, type SecondFactorMethod } from './census.ts';
export {
  issueMfaToken,
  liveMfaTokenUser,
  MFA_TOKEN_MAX_TRIES,
  MFA_TOKEN_TTL_MS,
  mfaRequired,
} from './mfa-tokens.ts';
export {
  CHALLENGE_TTL_MS,
  type CheckedAssertion,
  checkAssertion,
  passkeyAmr,
  passkeyFactor,
  recordAssertion,
  refuseWhilePasskeysOff,
  storeChallenge,
  verifyAssertion,
} from './passkey.ts';
export {
  Code,
  CurrentPasswordBody,
  FreshProofBody,
  FreshProofFields,
  PasskeyProof,
  Password,
  WebauthnResponse,
} from './proof.schemas.ts';
export {
  confirmedTotpSecret,
  dropRecoveryCodesWithoutFactors,
  endSessionsForFirstFactor,
  holdsSecondFactor,
  recoveryCodeHash,
  recoveryCodesForNewFactor,
  regenerateRecoveryCodes,
  requireSecretsKey,
  secondFactors,
  spendCode,
  totpContext,
} from './second-factors.ts';
