import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InteractionDetails } from 'oidc-provider';
import type { AuthContext } from '../../../http/guard.ts';
import { amrHasSecondFactor, type ClientInfo, holdsSecondFactor } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { clientPolicy, OIDC_SCOPES, type PublicClient } from '../clients/clients.service.ts';
import { resourceByIdentifier } from '../resources/resources.service.ts';
import type { AuthorizationServer } from './authorization-server.ts';
import { recordConsent } from './consents.service.ts';
import { openGrant } from './grant-sessions.ts';
import { ORGANIZATION_MFA, ORGANIZATION_PROMPT } from './organization-policy.ts';
import { askedOrganization, ORGANIZATIONS_SCOPE, permittedScopes } from './organization-tokens.ts';

type Raw = { req: IncomingMessage; res: ServerResponse };

/** The interaction of this browser (its cookie), or 404: expired, finished or another browser's. */
async function details(
  server: AuthorizationServer,
  raw: Raw,
  uid: string,
): Promise<InteractionDetails & { iat?: number }> {
  const { provider } = await server.get();
  let found: InteractionDetails & { iat?: number };
  try {
    found = await provider.interactionDetails(raw.req, raw.res);
  } catch {
    throw new ApiError('not_found', {
      detail: 'This sign-in request has expired; start again from the application',
    });
  }
  if (found.uid !== uid)
    throw new ApiError('not_found', { detail: 'This sign-in request is not this browser’s' });
  return found;
}

/**
 * The authorization request's `ui_locales` (API §24: it holds for every page of the interaction),
 * or null when this browser has no live interaction of that uid.
 */
export async function interactionUiLocales(
  server: AuthorizationServer,
  raw: Raw,
  uid: string,
): Promise<string | null> {
  try {
    const found = await details(server, raw, uid);
    const value = found.params.ui_locales;
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

const SCOPE_WORDS: Record<string, string> = {
  openid: 'Know who you are (your account identifier)',
  profile: 'See your name',
  email: 'See your e-mail address and whether it is confirmed',
  offline_access: 'Keep access while you are not using it',
  [ORGANIZATIONS_SCOPE]: 'See the organizations you belong to and your roles there',
};

export interface InteractionView {
  /** `organization`: the account is not a member of the organization asked for (docs/api.md §21). */
  prompt: 'login' | 'consent' | 'organization';
  client: { client_id: string; name: string; first_party: boolean };
  scopes: Array<{ name: string; description: string }>;
  apis: Array<{ identifier: string; name: string; scopes: Array<{ name: string; description: string }> }>;
}

/** What the hosted page shows: which step, which client, and in plain words what it asks for. */
export async function interactionView(
  ctx: AppContext,
  server: AuthorizationServer,
  raw: Raw,
  uid: string,
): Promise<InteractionView> {
  const d = await details(server, raw, uid);
  const clientId = String(d.params.client_id);
  const client = await clientPolicy(ctx, clientId);
  if (!client) throw new ApiError('not_found', { detail: 'The application is no longer registered' });
  const prompt =
    d.prompt.name === 'login' ? 'login' : d.prompt.name === ORGANIZATION_PROMPT ? 'organization' : 'consent';
  const shown = await listedOnPage(ctx, d, client);
  const scopes = shown.missingOIDCScope.map((name) => ({
    name,
    description: SCOPE_WORDS[name] ?? name,
  }));
  const apis: InteractionView['apis'] = [];
  for (const [identifier, names] of Object.entries(shown.missingResourceScopes)) {
    const resource = await resourceByIdentifier(ctx, identifier);
    if (!resource) continue;
    apis.push({
      identifier,
      name: resource.name,
      scopes: names.map((name) => ({
        name,
        description: resource.scopes.find((s) => s.name === name)?.description || name,
      })),
    });
  }
  return {
    prompt,
    client: { client_id: client.client_id, name: client.name, first_party: client.first_party },
    scopes,
    apis,
  };
}

/**
 * What the consent page lists, and so exactly what allowing it grants and stores (docs/api.md §17):
 * a request beyond the stored consent asks only for what is new; `prompt=consent` asks again, so the
 * page names everything asked for, not only what is missing (often nothing). Either way only what
 * the client registered (the authorization request refused anything else with invalid_scope).
 */
async function listedOnPage(ctx: AppContext, d: InteractionDetails, client: PublicClient) {
  const asked = await askedFor(ctx, d, client);
  if (d.prompt.reasons.includes('consent_prompt')) return asked;
  const missing = d.prompt.details as {
    missingOIDCScope?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  const resources: Record<string, string[]> = {};
  for (const [identifier, names] of Object.entries(missing.missingResourceScopes ?? {})) {
    const allowed = asked.missingResourceScopes[identifier] ?? [];
    const listed = names.filter((name) => allowed.includes(name));
    if (listed.length > 0) resources[identifier] = listed;
  }
  return {
    missingOIDCScope: (missing.missingOIDCScope ?? []).filter((n) => asked.missingOIDCScope.includes(n)),
    missingResourceScopes: resources,
  };
}

/** Everything a request asks for that its client may have: its OpenID scopes, and each API's scopes. */
async function askedFor(ctx: AppContext, d: InteractionDetails, client: PublicClient) {
  const asked = String(d.params.scope ?? '')
    .split(' ')
    .filter((name) => name !== '' && client.scopes.includes(name));
  const oidcScopes: readonly string[] = OIDC_SCOPES;
  const resources: Record<string, string[]> = {};
  const identifiers = [d.params.resource ?? []].flat().map(String);
  for (const identifier of identifiers.filter((i) => client.resources.includes(i))) {
    const resource = await resourceByIdentifier(ctx, identifier);
    const defined = resource?.scopes.map((s) => s.name) ?? [];
    const listed = asked.filter((name) => defined.includes(name));
    // docs/api.md §21: an `rbac` API lists only what the user's roles permit (what would be granted).
    const userId = d.session?.accountId;
    resources[identifier] =
      resource?.rbac && userId !== undefined
        ? await permittedScopes(ctx, userId, askedOrganization(d.params), listed)
        : listed;
  }
  return {
    missingOIDCScope: asked.filter((name) => oidcScopes.includes(name)),
    missingResourceScopes: resources,
  };
}

/**
 * Ends the login step with the Gatehouse session the hosted sign-in opened (signIn, through
 * /api/v1/login in cookie mode): the account, its `amr` and `auth_time`. A request that asked for a
 * fresh sign-in (`prompt=login`, `max_age`) needs a session authenticated since: otherwise 401
 * `reauthentication_required`, and the page signs out and in again.
 */
export async function finishLogin(
  ctx: AppContext,
  server: AuthorizationServer,
  raw: Raw,
  uid: string,
  auth: AuthContext,
): Promise<{ redirect_to: string }> {
  const d = await details(server, raw, uid);
  if (d.prompt.name !== 'login')
    throw new ApiError('not_found', { detail: 'This request is not waiting for a sign-in' });
  const authTime = auth.claims.auth_time ?? Math.floor(Number(auth.session.created_at) / 1000);
  const nowS = Math.floor(Date.now() / 1000);
  const maxAge = d.params.max_age === undefined ? null : Number(d.params.max_age);
  const staleForPrompt = d.prompt.reasons.includes('login_prompt') && d.iat !== undefined && authTime < d.iat;
  const staleForMaxAge = maxAge !== null && Number.isFinite(maxAge) && authTime + maxAge < nowS;
  if (staleForPrompt || staleForMaxAge) {
    throw new ApiError('reauthentication_required', { detail: 'The application asks you to sign in again' });
  }
  // docs/api.md §21, `require_mfa`: the organization asked for needs a second factor in the sign-in:
  // sign in again with it, or set one up first when the account has none.
  if (d.prompt.reasons.includes(ORGANIZATION_MFA) && !amrHasSecondFactor(auth.claims.amr)) {
    if (await holdsSecondFactor(ctx.db, auth.user.id)) {
      throw new ApiError('reauthentication_required', {
        detail: 'This organization asks for a second factor: sign in again with it',
      });
    }
    throw new ApiError('mfa_enrollment_required', {
      detail: 'This organization requires a second factor: set one up on your account page, then try again',
    });
  }
  const { provider } = await server.get();
  const redirect = await provider.interactionResult(
    raw.req,
    raw.res,
    {
      login: { accountId: auth.user.id, amr: auth.claims.amr, ts: authTime, remember: true },
      // The browser session of the library is tied to this Gatehouse session (grant-sessions.ts).
      gatehouse: { session_id: auth.session.id },
    },
    { mergeWithLastSubmission: false },
  );
  return { redirect_to: redirect };
}

/**
 * "Back to <client>" from the page refusing an organization the account is not a member of
 * (docs/api.md §21, "Refused organization on the hosted page"): the client gets access_denied.
 */
export async function refuseOrganization(
  server: AuthorizationServer,
  raw: Raw,
  uid: string,
): Promise<{ redirect_to: string }> {
  const d = await details(server, raw, uid);
  if (d.prompt.name !== ORGANIZATION_PROMPT)
    throw new ApiError('not_found', { detail: 'This request is not refusing an organization' });
  const { provider } = await server.get();
  const redirect = await provider.interactionResult(
    raw.req,
    raw.res,
    { error: 'access_denied', error_description: 'The user is not a member of the organization' },
    { mergeWithLastSubmission: false },
  );
  return { redirect_to: redirect };
}

/** Allows (and stores per user and client) what the consent step asked for, or denies it. */
export async function finishConsent(
  ctx: AppContext,
  server: AuthorizationServer,
  raw: Raw,
  uid: string,
  auth: AuthContext,
  allow: boolean,
  client: ClientInfo,
): Promise<{ redirect_to: string }> {
  const d = await details(server, raw, uid);
  if (d.prompt.name !== 'consent')
    throw new ApiError('not_found', { detail: 'This request is not asking for consent' });
  if (d.session?.accountId !== auth.user.id) {
    throw new ApiError('forbidden', { detail: 'This request belongs to another account; sign in as it' });
  }
  const { provider } = await server.get();
  if (!allow) {
    const redirect = await provider.interactionResult(
      raw.req,
      raw.res,
      { error: 'access_denied', error_description: 'The user did not allow the request' },
      { mergeWithLastSubmission: false },
    );
    return { redirect_to: redirect };
  }
  const clientId = String(d.params.client_id);
  const policy = await clientPolicy(ctx, clientId);
  if (!policy) throw new ApiError('not_found', { detail: 'The application is no longer registered' });
  // Exactly what the page listed (interactionView), computed the same way from the same interaction.
  const listed = await listedOnPage(ctx, d, policy);
  const existing = d.grantId ? await provider.Grant.find(d.grantId) : undefined;
  const grant =
    existing ??
    (await openGrant(ctx, provider, {
      accountId: auth.user.id,
      clientId,
      parentId: auth.session.id,
      amr: auth.claims.amr ?? [],
      loginTs: auth.claims.auth_time ?? Math.floor(Number(auth.session.created_at) / 1000),
      client,
    }));
  if (listed.missingOIDCScope.length > 0) grant.addOIDCScope(listed.missingOIDCScope.join(' '));
  for (const [identifier, scopes] of Object.entries(listed.missingResourceScopes)) {
    grant.addResourceScope(identifier, scopes.join(' '));
  }
  const grantId: string = await grant.save();
  await recordConsent(ctx, auth.user.id, clientId, {
    scopes: listed.missingOIDCScope,
    resources: listed.missingResourceScopes,
  });
  const redirect = await provider.interactionResult(
    raw.req,
    raw.res,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
  return { redirect_to: redirect };
}
