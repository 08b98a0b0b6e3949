// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { createClient, deleteClient, listClients, updateClient } from './clients/clients.service.ts';
export { createRegistrationToken } from './clients/registration-tokens.service.ts';
export { MAX_RESOURCE_TTL_S } from './oauth.schemas.ts';
export { authenticateOwnApiToken, isOwnApiToken } from './resources/own-api-tokens.ts';
export {
  type AuthorizationServer,
  createAuthorizationServer,
  INTERACTION_PATH,
  OAUTH_ROUTES,
} from './server/authorization-server.ts';
export { isLiveInteraction } from './server/interaction-live.ts';
