// The identity core: what every feature needs to know who someone is and to let them in, below the
// features and importing none (docs/architecture.md, "The dependency rule"). Features import it
// through this file only. The session opener itself is not here: every way in ends in signIn
// (sign-in/), and the second-factor machinery every way in asks is in factors/.
export * from './audit.queries.ts';
export * from './email.ts';
export {
  claimEventsToFanOut,
  enabledSubscriptions,
  insertBareEvent,
  type PendingEvent,
  pruneEvents,
} from './events.queries.ts';
export { subscribes, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.ts';
export * from './factors/index.ts';
export * from './identities.queries.ts';
export {
  amrHasSecondFactor,
  enrollmentGrantOf,
  enrollmentOnly,
  enrollmentRequired,
  isMultiFactor,
  secondFactorRequired,
} from './require-mfa.ts';
export {
  countLiveSessions,
  deleteExpiredRefreshTokens,
  type EndedSession,
  findSessionWithUser,
  insertRefreshToken,
  markRotated,
  revokeAllSessionRows,
  type SessionWithUser,
  touchSession,
} from './sessions.queries.ts';
export {
  type ClientInfo,
  clientInfo,
  detachSession,
  endSession,
  FEDERATED_LOGIN,
  idleWindowS,
  isSessionLive,
  PASSWORD_LOGIN,
  revokeClientSessions,
  revokeSession,
  revokeUserSessions,
  type SessionAuthentication,
} from './sessions.ts';
export * from './sign-in/index.ts';
export { tokenRolesOf } from './token-roles.queries.ts';
export * from './user.schemas.ts';
export * from './user-changes.queries.ts';
export * from './users.queries.ts';
