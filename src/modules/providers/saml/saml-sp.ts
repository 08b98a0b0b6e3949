import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { escapeHtml } from '../../../http/pages/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { SamlSettings } from './saml-config.ts';

/*
 * Gatehouse as a SAML service provider (docs/api.md §23): the protocol work is node-saml's. Each
 * connection is its own SP: entity id `<PUBLIC_URL>/saml/<name>`, ACS `<PUBLIC_URL>/saml/<name>/acs`.
 */

/** The 60 s of clock skew every time check allows (docs/api.md §23). */
export const SAML_SKEW_MS = 60_000;

export const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
export const NAMEID_PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

const base = (ctx: AppContext) => ctx.config.publicUrl.replace(/\/+$/, '');

/** The SP's entity id for a connection. */
export const spEntityId = (ctx: AppContext, name: string) => `${base(ctx)}/saml/${name}`;
/** The assertion consumer service URL (HTTP-POST binding). */
export const acsUrl = (ctx: AppContext, name: string) => `${base(ctx)}/saml/${name}/acs`;

/**
 * node-saml configured for one connection: assertions must be signed by one of the connection's
 * certificates (a Response signature alone is never enough), 60 s skew, the audience our entity
 * id. InResponseTo is Gatehouse's to check (the request lives in the shared database, bound to the
 * browser), so the library's in-memory cache is off. `requestId` fixes the AuthnRequest's ID.
 */
export function samlFor(ctx: AppContext, name: string, s: SamlSettings, requestId?: string): SAML {
  return new SAML({
    callbackUrl: acsUrl(ctx, name),
    entryPoint: s.idp_sso_url,
    issuer: spEntityId(ctx, name),
    audience: spEntityId(ctx, name),
    idpCert: s.idp_certificates,
    idpIssuer: s.idp_entity_id,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.never,
    // No NameIDPolicy Format: the IdP sends the format it is configured for (email or persistent).
    identifierFormat: null,
    // Asking for PasswordProtectedTransport would refuse people who signed in with a passkey or MFA.
    disableRequestedAuthnContext: true,
    signatureAlgorithm: 'sha256',
    ...(requestId === undefined ? {} : { generateUniqueId: () => requestId }),
  });
}

/** The AuthnRequest (HTTP-Redirect binding, unsigned) to the IdP, with our RelayState. */
export function authnRequestUrl(
  ctx: AppContext,
  name: string,
  s: SamlSettings,
  requestId: string,
  relayState: string,
): Promise<string> {
  return samlFor(ctx, name, s, requestId).getAuthorizeUrlAsync(relayState, undefined, {});
}

/**
 * The SP metadata (docs/api.md §23, settled): entity id, the ACS with the HTTP-POST binding, the
 * emailAddress and persistent NameID formats; AuthnRequestsSigned="false", WantAssertionsSigned="true".
 * Values are escaped; nothing here is signed.
 */
export function spMetadataXml(ctx: AppContext, name: string): string {
  const entity = escapeHtml(spEntityId(ctx, name));
  const acs = escapeHtml(acsUrl(ctx, name));
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entity}">
  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:NameIDFormat>${NAMEID_EMAIL}</md:NameIDFormat>
    <md:NameIDFormat>${NAMEID_PERSISTENT}</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acs}" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;
}
