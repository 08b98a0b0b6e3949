import type { IncomingMessage } from 'node:http';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { amrHasSecondFactor } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { globalRolesOf, membershipIn, membershipsOf, permissionsOf } from '../../organizations/index.ts';
import {
  deleteGrantOrganization,
  findGrantOrganization,
  upsertGrantOrganization,
} from './grant-organizations.queries.ts';

/*
 * Organization tokens (docs/api.md §21, "Tokens"; docs/organizations.md, "Organization tokens with
 * openid-client"), through the library's documented extension points only:
 * - `extraParams.organization` checks the authorization request's parameter (needs scope
 *   `organizations`, else invalid_request);
 * - the interaction policy (policy.ts) refuses a non-member (the hosted page says so, the client
 *   gets access_denied) and asks a `require_mfa` organization's member for a second factor;
 * - a post-middleware keeps the organization of each authorization beside its grant (a grant's id is
 *   its Gatehouse session's: `oauth_grant_organizations`);
 * - `rotateRefreshToken` (resource-indicators.ts) checks a refresh's `organization=` (switching) or
 *   the grant's current one (a membership that ended) before the token is consumed, so a refused
 *   refresh leaves the token usable; the switch is kept once the answer is a success;
 * - `extraTokenClaims` puts `org_id` in every access token of such a grant, and `roles` (RFC 9068
 *   §2.2.3.1) in a resource's; the account's `claims()` puts `org_id` in the ID token and
 *   `organizations` in the ID token and userinfo.
 */

export const ORGANIZATIONS_SCOPE = 'organizations';

const ORG_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The organization a refresh names, by request: its tokens' organization, and kept beside the grant
 * once the answer is a success when it changed (`store`).
 */
const switching = new WeakMap<IncomingMessage, { grantId: string; organizationId: string; store: boolean }>();

const on = (ctx: AppContext) => ctx.modules.isEnabled('organizations');

const scopeList = (value: unknown): string[] =>
  String(value ?? '')
    .split(' ')
    .filter(Boolean);

/** `extraParams.organization`: runs on every authorization request (and its resumption). */
export function organizationParam(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC, value: unknown) => {
    if (value === undefined || value === '') return;
    if (!on(ctx)) throw new errors.InvalidRequest('organizations are not enabled on this server');
    if (typeof value !== 'string' || !ORG_ID.test(value)) {
      throw new errors.InvalidRequest('organization must be the id of an organization');
    }
    if (!scopeList(kctx.oidc.params?.scope).includes(ORGANIZATIONS_SCOPE)) {
      throw new errors.InvalidRequest('organization needs the organizations scope');
    }
  };
}

/** The organization an authorization request names, if any. */
export function askedOrganization(params: Record<string, unknown> | undefined): string | null {
  const value = params?.organization;
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The organization a token of this request acts in: the one a refresh switches to, the one the
 * authorization request names, or the grant's.
 */
export async function organizationOfRequest(
  ctx: AppContext,
  kctx: KoaContextWithOIDC | undefined,
  grantId: string | undefined,
): Promise<string | null> {
  if (!on(ctx)) return null;
  const pending = kctx ? switching.get(kctx.req) : undefined;
  if (pending !== undefined && pending.grantId === grantId) return pending.organizationId;
  const route = kctx?.oidc?.route;
  if (route === 'authorization' || route === 'resume') return askedOrganization(kctx?.oidc?.params);
  return grantId === undefined ? null : ((await findGrantOrganization(ctx.db, grantId)) ?? null);
}

/** The roles a token of this user carries: global ones plus, with an organization, that one's. */
export async function rolesFor(ctx: AppContext, userId: string, organizationId: string | null) {
  const global = await globalRolesOf(ctx, userId);
  const inOrg =
    organizationId === null ? [] : ((await membershipIn(ctx, organizationId, userId))?.roles ?? []);
  return [...new Set([...global, ...inOrg])];
}

/**
 * RBAC for a resource marked `rbac` (docs/api.md §21): of the scopes the client may ask, the user
 * gets only those their roles grant as permissions.
 */
export async function permittedScopes(
  ctx: AppContext,
  userId: string,
  organizationId: string | null,
  scopes: readonly string[],
): Promise<string[]> {
  if (!on(ctx)) return [];
  const permissions = new Set(await permissionsOf(ctx, await rolesFor(ctx, userId, organizationId)));
  return scopes.filter((s) => permissions.has(s));
}

/** The user and organization a resource's token is being made for (none for client credentials). */
export async function grantSubjectOf(
  ctx: AppContext,
  kctx: KoaContextWithOIDC,
): Promise<{ userId: string; organizationId: string | null } | null> {
  const { oidc } = kctx;
  if (oidc.route === 'authorization' || oidc.route === 'resume') {
    const userId: string | undefined = oidc.session?.accountId;
    return userId === undefined ? null : { userId, organizationId: askedOrganization(oidc.params) };
  }
  const entities = oidc.entities as {
    AuthorizationCode?: { accountId?: string; grantId?: string };
    RefreshToken?: { accountId?: string; grantId?: string };
  };
  const source = entities.AuthorizationCode ?? entities.RefreshToken;
  if (source?.accountId === undefined) return null;
  return { userId: source.accountId, organizationId: await organizationOfRequest(ctx, kctx, source.grantId) };
}

/** The organization of a user's access token as the claims hook is told it (docs/api.md §21). */
export interface TokenOrganization {
  id: string;
  slug: string;
  roles: string[];
}

/**
 * The organization claims of a user's access token: `org_id` in every one of an organization grant,
 * `roles` in a resource's; and the organization as the claims hook is told it.
 */
export async function organizationFacts(
  ctx: AppContext,
  kctx: KoaContextWithOIDC | undefined,
  accountId: string,
  grantId: string | undefined,
  forResource: boolean,
  /** Read the membership too (for the claims hook); the claims alone do not need it. */
  withOrganization = true,
): Promise<{ claims: Record<string, unknown>; organization: TokenOrganization | null }> {
  const claims: Record<string, unknown> = {};
  if (!on(ctx)) return { claims, organization: null };
  const organizationId = await organizationOfRequest(ctx, kctx, grantId);
  const membership =
    organizationId === null || !withOrganization ? null : await membershipIn(ctx, organizationId, accountId);
  if (organizationId !== null) claims.org_id = organizationId;
  if (forResource) {
    const roles = await rolesFor(ctx, accountId, organizationId);
    if (roles.length > 0) claims.roles = roles;
  }
  const organization =
    membership === null ? null : { id: membership.id, slug: membership.slug, roles: membership.roles };
  return { claims, organization };
}

/** `extraTokenClaims`: `org_id` in every access token of an organization grant, `roles` in a resource's. */
export function organizationTokenClaims(ctx: AppContext) {
  return async (
    kctx: KoaContextWithOIDC | undefined,
    token: { kind: string; accountId?: string; grantId?: string; resourceServer?: unknown },
  ): Promise<Record<string, unknown> | undefined> => {
    if (!on(ctx) || token.kind !== 'AccessToken' || token.accountId === undefined) return undefined;
    const { claims } = await organizationFacts(
      ctx,
      kctx,
      token.accountId,
      token.grantId,
      token.resourceServer !== undefined,
      false,
    );
    return Object.keys(claims).length > 0 ? claims : undefined;
  };
}

/**
 * The account's organization claims: `organizations` for the scope (ID token and userinfo), and
 * `org_id` in the ID token of an organization grant (userinfo does not carry it).
 */
export async function accountOrganizationClaims(
  ctx: AppContext,
  kctx: KoaContextWithOIDC | undefined,
  userId: string,
  use: string,
  scope: string,
  grantId: string | undefined,
): Promise<Record<string, unknown>> {
  if (!on(ctx)) return {};
  const claims: Record<string, unknown> = {};
  if (scopeList(scope).includes(ORGANIZATIONS_SCOPE)) {
    claims.organizations = (await membershipsOf(ctx, userId)).map((m) => ({
      id: m.id,
      slug: m.slug,
      roles: m.roles,
    }));
  }
  if (use === 'id_token') {
    const organizationId = await organizationOfRequest(ctx, kctx, grantId);
    if (organizationId !== null) claims.org_id = organizationId;
  }
  return claims;
}

/**
 * The refresh grant's organization rule, run before the token is consumed: `organization=<id>`
 * (with scope `organizations`) switches to an organization the user belongs to (and whose
 * `require_mfa` the grant's sign-in meets), else 400 invalid_target; without it the grant keeps its
 * organization while the membership (and its second-factor rule) still holds, else 400
 * invalid_grant (docs/organizations.md, "Switching organization").
 */
export async function checkRefreshOrganization(ctx: AppContext, kctx: KoaContextWithOIDC): Promise<void> {
  const token = kctx.oidc.entities.RefreshToken as
    | { accountId: string; grantId: string; scopes: Set<string>; amr?: string[] }
    | undefined;
  if (!token) return;
  const body = (kctx.oidc.body ?? {}) as Record<string, unknown>;
  const asked = body.organization;
  if (asked !== undefined && asked !== '') {
    if (!on(ctx)) throw new errors.InvalidRequest('organizations are not enabled on this server');
    if (typeof asked !== 'string' || !ORG_ID.test(asked)) {
      throw new errors.InvalidRequest('organization must be the id of one organization');
    }
    if (!token.scopes.has(ORGANIZATIONS_SCOPE)) {
      throw new errors.InvalidRequest('organization needs a grant with the organizations scope');
    }
    const membership = await membershipIn(ctx, asked, token.accountId);
    if (membership === null) throw new errors.InvalidTarget('the user is not a member of that organization');
    if (membership.require_mfa && !amrHasSecondFactor(token.amr)) {
      throw new errors.InvalidTarget('that organization requires a second factor in the sign-in');
    }
    // Naming the grant's current organization changes nothing to store (a refresh that always names
    // it writes nothing).
    const current = await findGrantOrganization(ctx.db, token.grantId);
    switching.set(kctx.req, { grantId: token.grantId, organizationId: asked, store: current !== asked });
    return;
  }
  if (!on(ctx)) return;
  const current = await findGrantOrganization(ctx.db, token.grantId);
  if (current === undefined) return;
  const membership = await membershipIn(ctx, current, token.accountId);
  if (membership === null) {
    throw new errors.InvalidGrant("the user is no longer a member of the grant's organization");
  }
  if (membership.require_mfa && !amrHasSecondFactor(token.amr)) {
    throw new errors.InvalidGrant("the grant's organization now requires a second factor in the sign-in");
  }
}

/**
 * A post-middleware: keeps the organization of a successful authorization (its code's grant) and
 * of a successful refresh that switched, beside the grant. An authorization without
 * `organization=` leaves its grant with none.
 */
export function keepsGrantOrganization(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const route = kctx.oidc?.route;
    if (route === 'token') {
      const pending = switching.get(kctx.req);
      if (pending?.store === true && kctx.status === 200) {
        await upsertGrantOrganization(ctx.db, pending.grantId, pending.organizationId, Date.now());
      }
      return;
    }
    if (route !== 'authorization' && route !== 'resume') return;
    const code = kctx.oidc.entities?.AuthorizationCode as { grantId?: string } | undefined;
    if (code?.grantId === undefined) return;
    const organizationId = on(ctx) ? askedOrganization(kctx.oidc.params) : null;
    if (organizationId === null) await deleteGrantOrganization(ctx.db, code.grantId);
    else await upsertGrantOrganization(ctx.db, code.grantId, organizationId, Date.now());
  };
}
