/*
 * Browser apps work without CORS_ORIGINS (docs/api.md §17): the library's client-based CORS
 * (`clientBasedCORS`, a documented option) lets the token, userinfo and revocation endpoints answer
 * a cross-origin request from an origin of the calling client's registered redirect URIs. Any other
 * origin, and any origin at introspection (a server's business), gets the library's refusal
 * (`invalid_request`, no CORS headers). Discovery and the JWKS answer every origin; preflights are
 * answered by the library before it knows the client.
 */

const CLIENT_ROUTES = new Set(['token', 'userinfo', 'revocation']);

interface CorsClient {
  redirectUris?: string[];
}

/** The origins of a client's redirect URIs; a private-use scheme has none (`null`). */
function redirectOrigins(client: CorsClient): Set<string> {
  const origins = new Set<string>();
  for (const uri of client.redirectUris ?? []) {
    const origin = URL.parse(uri)?.origin;
    if (origin !== undefined && origin !== 'null') origins.add(origin);
  }
  return origins;
}

/** The library's `clientBasedCORS(ctx, origin, client)`: may this origin call for this client? */
export function clientBasedCors(kctx: unknown, origin: string, client: unknown): boolean {
  const route = (kctx as { oidc?: { route?: string } }).oidc?.route ?? '';
  if (origin === 'null' || !CLIENT_ROUTES.has(route)) return false;
  return redirectOrigins(client as CorsClient).has(origin);
}
