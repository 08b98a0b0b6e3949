// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { INTERACTION_PATH, OAUTH_ROUTES } from './authorization-server.ts';
export { createClient, deleteClient, listClients, updateClient } from './clients.service.ts';
export { isLiveInteraction } from './interaction-live.ts';
export { passToAuthorizationServer } from './mount.ts';
export { MAX_RESOURCE_TTL_S } from './oauth.schemas.ts';
export { createRegistrationToken } from './registration-tokens.service.ts';
