// The one sign-in pipeline (docs/architecture.md, "One way a session opens"): a way in verifies its
// proof, finds the user, and ends in signIn (signed in, or a second factor due) or refuseSignIn,
// inside withLoginAttempt, which owns the attempt's throttle ticket and its count. The session
// opener (open-session.ts) is not exported: no feature opens a session any other way.
export {
  countLogin,
  type LoginAttempt,
  type LoginOutcome,
  loginThrottle,
  type Refusal,
  refuseSignIn,
  reserveLoginAttempt,
  type SignInWay,
  withLoginAttempt,
} from './attempt.ts';
export {
  confirmCurrentPassword,
  type FreshProof,
  type ProofKind,
  requireFreshProof,
} from './fresh-proof.ts';
export {
  type AddressCheck,
  type AddressCheckListener,
  createSignInListeners,
  type SessionOpened,
  type SessionOpenedListener,
  type SignInListeners,
} from './listeners.ts';
export {
  type Opening,
  type SecondFactorDue,
  type SignedIn,
  type SignInOutcome,
  type SignInRequest,
  signIn,
} from './sign-in.ts';
