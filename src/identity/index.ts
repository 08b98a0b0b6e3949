// The identity core: what every feature needs to know who someone is and to let them in, below the
// features and importing none (docs/architecture.md, "The dependency rule"). Features import it
// through this file only. The session opener itself is not here: every way in ends in signIn
// (sign-in/), and the second-factor machinery every way in asks is in factors/.
export * from './audit.queries.ts';
export * from './email.ts';
export { enabledSubscriptions } from './events.queries.ts';
export { subscribes, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.ts';
export * from './factors/index.ts';
export {
  enrollmentGrantOf,
  enrollmentOnly,
  enrollmentRequired,
  isMultiFactor,
  secondFactorRequired,
} from './require-mfa.ts';
export {
  countLiveSessions,
  findSessionWithUser,
  insertRefreshToken,
  type SessionWithUser,
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
export * from './user.schemas.ts';
export * from './users.queries.ts';
