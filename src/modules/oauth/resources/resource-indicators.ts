import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { clientPolicy, OIDC_SCOPES } from '../clients/clients.service.ts';
import { checkRefreshOrganization, grantSubjectOf, permittedScopes } from '../server/organization-tokens.ts';
import { resourceByIdentifier } from './resources.service.ts';

/**
 * RFC 8707 for the library (docs/api.md §17, "APIs (resources) and audiences"): a client may ask
 * only for the APIs an admin gave it, with the scopes it registered of each; the token for an API
 * is an RFC 9068 JWT with the API's identifier as audience and the API's lifetime.
 */
export function resourceIndicators(ctx: AppContext) {
  const { config } = ctx;
  return {
    enabled: true,
    // Called for every authorization request (and client credentials grant) without a `resource`,
    // before the library drops the API scopes of such a request silently: docs/api.md §17 answers
    // invalid_scope instead.
    defaultResource: async (kctx: KoaContextWithOIDC, client: { clientId: string }) => {
      if (asksForScopes(kctx)) await checkAskedScopes(ctx, kctx, client.clientId, false);
      return undefined;
    },
    useGrantedResource: async () => true,
    getResourceServerInfo: async (
      kctx: KoaContextWithOIDC,
      identifier: string,
      client: { clientId: string },
    ) => {
      if (asksForScopes(kctx)) await checkAskedScopes(ctx, kctx, client.clientId, true);
      const policy = await clientPolicy(ctx, client.clientId);
      const resource = policy?.resources.includes(identifier)
        ? await resourceByIdentifier(ctx, identifier)
        : null;
      if (!resource) throw new errors.InvalidTarget('this client may not ask for that resource');
      // The API's scopes this client registered (docs/oauth.md). The library would drop any
      // other scope asked for silently; docs/api.md §17 answers invalid_scope instead.
      let allowed = resource.scopes.map((s) => s.name).filter((name) => policy?.scopes.includes(name));
      const asked = String(kctx.oidc?.params?.scope ?? '')
        .split(' ')
        .filter(Boolean);
      const oidcScopes: readonly string[] = OIDC_SCOPES;
      const stray = asked.find((name) => !oidcScopes.includes(name) && !allowed.includes(name));
      if (stray !== undefined) throw new errors.InvalidScope('requested scope is not allowed', stray);
      // docs/api.md §21: an `rbac` API gets in a user grant only the scopes the user's roles (global,
      // and in the grant's organization) grant as permissions; the others asked for are left out of
      // `scope` (RFC 6749 §3.3), and the consent page does not list them. Client credentials keep
      // the client's registered scopes.
      const subject = resource.rbac ? await grantSubjectOf(ctx, kctx) : null;
      if (subject !== null) {
        allowed = await permittedScopes(ctx, subject.userId, subject.organizationId, allowed);
      }
      return {
        scope: allowed.join(' '),
        audience: resource.identifier,
        accessTokenTTL: resource.access_token_ttl_s,
        accessTokenFormat: 'jwt',
        // A token for another service, so ACCESS_TOKEN_ALG's algorithm, as for every token
        // Gatehouse issues for others (docs/api.md §14); ID tokens stay RS256 (OpenID Discovery).
        jwt: { sign: { alg: config.accessTokenAlg } },
      };
    },
  };
}

/**
 * The requests whose `scope` asks for something new: the authorization request (and its
 * resumption), and a client credentials grant. A refresh asks within its grant (the library checks).
 */
function asksForScopes(kctx: KoaContextWithOIDC): boolean {
  const route = kctx.oidc?.route;
  if (route === 'authorization' || route === 'resume') return true;
  return route === 'token' && kctx.oidc?.params?.grant_type === 'client_credentials';
}

/**
 * Every scope asked for is one the client registered, and an API scope comes with a `resource`
 * (docs/api.md §17), or invalid_scope. The library checks only its own scopes against the client's
 * `scope` metadata, which can name no API scope and, left out (a client with API scopes only),
 * allows every scope the provider knows: the client's exact scopes are Gatehouse's to check.
 */
async function checkAskedScopes(
  ctx: AppContext,
  kctx: KoaContextWithOIDC,
  clientId: string,
  withResource: boolean,
): Promise<void> {
  const asked = String(kctx.oidc?.params?.scope ?? '')
    .split(' ')
    .filter(Boolean);
  if (asked.length === 0) return;
  const registered = (await clientPolicy(ctx, clientId))?.scopes ?? [];
  const unregistered = asked.find((name) => !registered.includes(name));
  if (unregistered !== undefined) {
    throw new errors.InvalidScope('requested scope is not allowed', unregistered);
  }
  const oidcScopes: readonly string[] = OIDC_SCOPES;
  const apiScope = withResource ? undefined : asked.find((name) => !oidcScopes.includes(name));
  if (apiScope !== undefined) {
    throw new errors.InvalidScope('an API scope needs the resource parameter naming its API', apiScope);
  }
}

/**
 * The library's `rotateRefreshToken`: every use of a refresh token rotates it (docs/api.md §17).
 * The library calls it once the token is checked and just before consuming it, but resolves the
 * refresh's `resource` only after: the resource is checked here first, as the library will check
 * it, so a refused refresh (invalid_target, invalid_scope) leaves the token unused and the
 * client's next correct refresh works, rather than counting as a reuse that ends the grant.
 */
export function rotateAfterTargetCheck(ctx: AppContext) {
  const { getResourceServerInfo } = resourceIndicators(ctx);
  return async (kctx: KoaContextWithOIDC): Promise<boolean> => {
    const token = kctx.oidc.entities.RefreshToken as
      | { resource?: string | string[]; resourceIndicators: Set<string> }
      | undefined;
    if (!token) return true;
    // The organization a refresh names (or the grant keeps) is checked first too (organization-tokens.ts).
    await checkRefreshOrganization(ctx, kctx);
    const asked: unknown = kctx.oidc.params?.resource;
    const resource = asked ?? (typeof token.resource === 'string' ? token.resource : undefined);
    if (resource === undefined) return true;
    if (typeof resource !== 'string') {
      throw new errors.InvalidTarget('only a single resource indicator value must be requested');
    }
    if (!token.resourceIndicators.has(resource)) throw new errors.InvalidTarget();
    await getResourceServerInfo(kctx, resource, kctx.oidc.client as { clientId: string });
    return true;
  };
}
