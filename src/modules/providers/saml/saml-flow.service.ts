import { randomBytes } from 'node:crypto';
import type { ClientInfo, LoginAttempt } from '../../../identity/index.ts';
import { refuseSignIn, withLoginAttempt } from '../../../identity/index.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { Db } from '../../../platform/db/schema.ts';
import { joinProvisioned } from '../../organizations/index.ts';
import { insertFlow, takeFlow } from '../flow/flow.queries.ts';
import {
  FLOW_TTL_MS,
  type FlowPurpose,
  type Landing,
  PROVIDER_WAY,
  type Started,
  sealFlow,
  signInWithProvider,
  spent,
} from '../flow/flow.service.ts';
import { linkToAccount } from '../flow/link.service.ts';
import type { UpstreamIdentity } from '../upstream/id-token.ts';
import type { MappedIdentity } from '../upstream/identity-mapping.ts';
import { notFound, type Provider, requireProvider } from '../upstream/providers.service.ts';
import { type AssertedPerson, checkAssertion, checkEnvelope, SamlRefused } from './saml-checks.ts';
import type { SamlSettings } from './saml-config.ts';
import { deleteExpiredAssertionUses, reserveAssertionUse } from './saml-replay.queries.ts';
import { acsUrl, authnRequestUrl, samlFor, spEntityId } from './saml-sp.ts';

/*
 * The SAML sign-in of a connection (docs/api.md §23): the SP-initiated start (an AuthnRequest by the
 * HTTP-Redirect binding, its state kept server-side like any provider flow and bound to the browser
 * by a SameSite=None cookie, since the IdP answers with a cross-site POST) and the assertion
 * consumer service, which ends in the providers' identity mapping and the one sign-in pipeline.
 */

const base = (ctx: AppContext) => new URL(ctx.config.publicUrl).pathname.replace(/\/+$/, '');

/** The connection behind a name: enabled and of kind `saml`, else 404 (no other kind answers here). */
export async function requireSamlConnection(
  ctx: AppContext,
  name: string,
): Promise<Provider & { saml: SamlSettings }> {
  const provider = await requireProvider(ctx, name);
  if (provider.kind !== 'saml' || provider.saml === null) throw notFound(name);
  return provider as Provider & { saml: SamlSettings };
}

/**
 * `idp.start` (and `idp.link`) for a SAML connection: a fresh AuthnRequest ID (kept as the flow's
 * `state`, for InResponseTo) and an opaque RelayState (its hash kept as the flow's `nonce`), keyed by
 * the hash of the browser cookie's random value, single use, 10 minutes.
 */
export async function startSamlFlow(
  ctx: AppContext,
  provider: Provider,
  returnTo: string,
  purpose: FlowPurpose,
  binding: { userId: string; sessionId: string } | null,
): Promise<Started> {
  if (provider.saml === null) throw notFound(provider.name);
  const browserToken = newOpaqueToken();
  const hash = hashOpaqueToken(browserToken);
  // An xs:ID must not start with a digit.
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const relayState = newOpaqueToken();
  const location = await authnRequestUrl(ctx, provider.name, provider.saml, requestId, relayState);
  const now = Date.now();
  await insertFlow(ctx.db, {
    browser_hash: hash,
    purpose,
    provider: provider.name,
    state: requestId,
    nonce: hashOpaqueToken(relayState),
    verifier_box: sealFlow(ctx, hash, Buffer.alloc(0)),
    return_to: returnTo,
    user_id: binding?.userId ?? null,
    session_id: binding?.sessionId ?? null,
    created_at: now,
    expires_at: now + FLOW_TTL_MS,
  });
  return { location, browserToken, crossSitePost: true, saml: true };
}

const refused = (reason: string) =>
  new ApiError('idp_token_invalid', { detail: `SAML response refused: ${reason}` });

/** What the ACS received: the POSTed fields and the browser's flow cookie. */
export interface AcsInput {
  samlResponse: string | undefined;
  relayState: string | undefined;
  browserToken: string | undefined;
}

/**
 * `POST /saml/<name>/acs`: the refusals of docs/api.md §23 land on the sign-in page with
 * `idp_token_invalid` (signature, conditions, issuer, audience, destination, recipient, replay, DTD,
 * SHA-1, an address outside `domains`), `link_invalid` (a missing, spent or foreign RelayState or
 * InResponseTo; an unsolicited response the connection does not allow) or `identity_link_required`;
 * audited and counted by refuseSignIn; nothing is created, linked or signed in.
 */
export function finishSamlFlow(
  ctx: AppContext,
  name: string,
  input: AcsInput,
  client: ClientInfo,
): Promise<Landing> {
  return withLoginAttempt(ctx, { way: PROVIDER_WAY, client }, async (attempt) => {
    try {
      return await landSaml(ctx, attempt, name, input);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) {
        ctx.log.warn({ err, provider: name }, 'SAML assertion consumer failed');
      }
      const code = err instanceof ApiError ? err.code : 'internal_error';
      if (err instanceof ApiError && err.status < 500) {
        const refusal = { reason: code, details: { provider: name }, after: { detail: err.detail ?? null } };
        await refuseSignIn(attempt, { ...refusal, wrongGuess: false }, err);
      }
      return { kind: 'refused', code };
    }
  });
}

async function landSaml(
  ctx: AppContext,
  attempt: LoginAttempt,
  name: string,
  input: AcsInput,
): Promise<Landing> {
  const provider = await requireSamlConnection(ctx, name);
  if (!provider.enabled) throw notFound(name);
  const s = provider.saml;
  if (!input.samlResponse) throw refused('no SAMLResponse');
  const acs = acsUrl(ctx, name);
  const xml = Buffer.from(input.samlResponse, 'base64').toString('utf8');
  const envelope = guard(() => checkEnvelope(xml, s, acs));
  // The request this answers must be a live one of this browser (taken once, whatever follows).
  const flow =
    envelope.inResponseTo === null ? null : await takeOwnFlow(ctx, name, input, envelope.inResponseTo);
  if (flow === null && !s.allow_idp_initiated) throw spent();
  let verifiedXml: string;
  try {
    const { profile } = await samlFor(ctx, name, s).validatePostResponseAsync({
      SAMLResponse: input.samlResponse,
    });
    if (!profile) throw new SamlRefused('no assertion');
    verifiedXml = profile.getAssertionXml?.() ?? '';
  } catch (err) {
    throw refused(err instanceof Error ? err.message : 'invalid');
  }
  const person = guard(() =>
    checkAssertion(verifiedXml, envelope, s, { acs, audience: spEntityId(ctx, name) }),
  );
  if ((flow?.state ?? null) !== person.inResponseTo) throw spent();
  const upstream: UpstreamIdentity = {
    identity: identityOf(provider, person),
    organization: null,
    idToken: null,
  };
  const reserve = (db: Db) => reserveAssertion(db, s.idp_entity_id, person);
  if (flow?.purpose === 'link') {
    await reserve(ctx.db);
    await linkToAccount(ctx, provider, upstream, flow, attempt.client);
    return { kind: 'linked', returnTo: flow.return_to };
  }
  // An IdP-initiated sign-in lands on /account; its RelayState is ignored (docs/api.md §23).
  const returnTo = flow?.return_to ?? `${base(ctx)}/account`;
  // docs/api.md §23: a person this connection provisions joins its organization (default_roles).
  const organizationId = provider.organizationId;
  const afterMapped = async (trx: Db, mapped: MappedIdentity) => {
    if (!mapped.created || organizationId === null || !ctx.modules.isEnabled('organizations')) return;
    const joined = await joinProvisioned(trx, organizationId, mapped.user.id, attempt.client);
    if (joined) mapped.events.push(joined);
  };
  return signInWithProvider(ctx, attempt, provider, upstream, returnTo, { reserve, afterMapped });
}

function guard<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof SamlRefused) throw refused(err.reason);
    throw err;
  }
}

async function takeOwnFlow(ctx: AppContext, name: string, input: AcsInput, inResponseTo: string) {
  if (!input.browserToken || !input.relayState) throw spent();
  const flow = await takeFlow(ctx.db, hashOpaqueToken(input.browserToken));
  if (
    !flow ||
    flow.purpose === 'second_factor' ||
    flow.provider !== name ||
    flow.expires_at < Date.now() ||
    flow.state !== inResponseTo ||
    flow.nonce !== hashOpaqueToken(input.relayState)
  ) {
    throw spent();
  }
  return flow;
}

/**
 * The person the IdP vouched for: an identity is (idp_entity_id, NameID). The address counts as
 * verified only at one of the connection's `domains` (exact, lower-cased); any other is refused.
 */
function identityOf(provider: Provider, person: AssertedPerson) {
  const email = person.email?.trim() ?? '';
  const at = email.lastIndexOf('@');
  const domain = at > 0 ? email.slice(at + 1).toLowerCase() : '';
  if (domain === '' || !provider.domains.includes(domain)) {
    throw refused("the asserted address is not at one of the connection's domains");
  }
  return {
    issuer: (provider.saml as SamlSettings).idp_entity_id,
    subject: person.nameId,
    email,
    emailVerified: true,
    name: person.name,
    expiresAt: person.rememberUntil,
  };
}

/** "An assertion signs in once": reserved in the sign-in's transaction, so a refused one is not recorded. */
async function reserveAssertion(db: Db, idpEntityId: string, person: AssertedPerson): Promise<void> {
  const key = hashOpaqueToken(`${idpEntityId}\n${person.assertionId}`);
  if (!(await reserveAssertionUse(db, key, person.rememberUntil)))
    throw refused('the assertion was used before');
}

/** Deletes used-assertion records past their expiry (the sso module's job); returns how many. */
export function pruneAssertionUses(ctx: AppContext, now = Date.now()): Promise<number> {
  return deleteExpiredAssertionUses(ctx.db, now);
}
