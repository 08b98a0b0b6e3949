import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as samlify from 'samlify';

/*
 * A real SAML identity provider for the tests (docs/sso.md): samlify's IdentityProvider, another
 * library than the SP's node-saml, signs every response with its own XML-signature code. Responses
 * are built from samlify's default template with values a test may override (a wrong audience, an
 * expired window …) before samlify signs them; attacks on the signed document (wrapping, a second
 * assertion, a DTD) are applied to the signed XML afterwards by the tests themselves.
 * The schema validator is skipped on the IdP side only: samlify requires one, and what it would
 * validate is samlify's own output.
 */
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const FIXTURES = new URL('../sso/fixtures/', import.meta.url);
export const IDP_KEY = readFileSync(new URL('idp-key.pem', FIXTURES), 'utf8');
export const IDP_CERT = readFileSync(new URL('idp-cert.pem', FIXTURES), 'utf8');
export const FOREIGN_KEY = readFileSync(new URL('foreign-key.pem', FIXTURES), 'utf8');
export const FOREIGN_CERT = readFileSync(new URL('foreign-cert.pem', FIXTURES), 'utf8');

export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
export const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export interface SamlUser {
  nameId: string;
  email?: string;
  name?: string;
}

/** What a test may change in a response before it is signed (samlify's template tags). */
export type ResponseValues = Partial<
  Record<
    | 'ID'
    | 'AssertionID'
    | 'Destination'
    | 'Audience'
    | 'SubjectRecipient'
    | 'Issuer'
    | 'AssertionIssuer'
    | 'IssueInstant'
    | 'ConditionsNotBefore'
    | 'ConditionsNotOnOrAfter'
    | 'SubjectConfirmationDataNotOnOrAfter'
    | 'InResponseTo'
    | 'NameIDFormat',
    string
  >
>;

export interface RespondOptions {
  /** The start's 302 Location (an AuthnRequest by the redirect binding); null: IdP-initiated. */
  location: string | null;
  user: SamlUser;
  values?: ResponseValues;
  /** Sign with another key (a foreign IdP). */
  foreign?: boolean;
  signatureAlgorithm?: string;
  /** Also sign the Response (Okta's default); the assertion is always signed (our metadata asks). */
  signResponse?: boolean;
  /** Sign only the Response, not the assertion (what an SP that accepts that would get). */
  onlyResponseSigned?: boolean;
}

export interface SamlIdp {
  entityId: string;
  ssoUrl: string;
  metadataXml: string;
  /** A signed response for the SP whose metadata is given, with the RelayState to post back. */
  respond(
    spMetadata: string,
    options: RespondOptions,
  ): Promise<{ SAMLResponse: string; RelayState?: string }>;
}

// Response and assertion Issuers are separate tags here, so a test can change one of them alone.
const TEMPLATE =
  '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{ID}" Version="2.0" IssueInstant="{IssueInstant}" Destination="{Destination}" InResponseTo="{InResponseTo}"><saml:Issuer>{Issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status><saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="{AssertionID}" Version="2.0" IssueInstant="{IssueInstant}"><saml:Issuer>{AssertionIssuer}</saml:Issuer><saml:Subject><saml:NameID Format="{NameIDFormat}">{NameID}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="{SubjectConfirmationDataNotOnOrAfter}" Recipient="{SubjectRecipient}" InResponseTo="{InResponseTo}"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="{ConditionsNotBefore}" NotOnOrAfter="{ConditionsNotOnOrAfter}"><saml:AudienceRestriction><saml:Audience>{Audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="{IssueInstant}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>{AttributeStatement}</saml:Assertion></samlp:Response>';

const xmlText = (v: string) =>
  v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const newId = () => `_${randomBytes(16).toString('hex')}`;

function attributeStatement(user: SamlUser): string {
  const attr = (name: string, value: string) =>
    `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">${xmlText(value)}</saml:AttributeValue></saml:Attribute>`;
  const parts = [
    ...(user.email === undefined ? [] : [attr('email', user.email)]),
    ...(user.name === undefined ? [] : [attr('displayName', user.name)]),
  ];
  return parts.length === 0 ? '' : `<saml:AttributeStatement>${parts.join('')}</saml:AttributeStatement>`;
}

/** An identity provider with its entity id and SSO URL (nothing listens there: the tests carry the messages). */
export function createSamlIdp(
  entityId = 'https://idp.example.test/saml',
  ssoUrl = 'https://idp.example.test/sso',
): SamlIdp {
  const make = (key: string, cert: string, signatureAlgorithm: string) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: key,
      signingCert: cert,
      requestSignatureAlgorithm: signatureAlgorithm,
      nameIDFormat: [EMAIL_FORMAT],
      singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
      wantAuthnRequestsSigned: false,
    });
  const idp = make(IDP_KEY, IDP_CERT, RSA_SHA256);
  return {
    entityId,
    ssoUrl,
    metadataXml: idp.getMetadata(),
    async respond(spMetadata, o) {
      const sp = samlify.ServiceProvider({
        metadata: spMetadata,
        wantMessageSigned: o.signResponse === true,
      });
      const signer = make(
        o.foreign ? FOREIGN_KEY : IDP_KEY,
        o.foreign ? FOREIGN_CERT : IDP_CERT,
        o.signatureAlgorithm ?? RSA_SHA256,
      );
      let requestId = '';
      let relayState: string | undefined;
      if (o.location !== null) {
        const url = new URL(o.location);
        const query = Object.fromEntries(url.searchParams);
        const parsed = await idp.parseLoginRequest(sp, 'redirect', { query, octetString: '' } as never);
        requestId = String((parsed.extract as { request: { id: string } }).request.id);
        relayState = url.searchParams.get('RelayState') ?? undefined;
      }
      const acs = String(sp.entityMeta.getAssertionConsumerService('post'));
      const now = new Date();
      const later = new Date(now.getTime() + 5 * 60_000).toISOString();
      const values: Record<string, string> = {
        ID: newId(),
        AssertionID: newId(),
        Destination: acs,
        Audience: sp.entityMeta.getEntityID(),
        SubjectRecipient: acs,
        Issuer: entityId,
        AssertionIssuer: o.values?.Issuer ?? entityId,
        IssueInstant: now.toISOString(),
        ConditionsNotBefore: now.toISOString(),
        ConditionsNotOnOrAfter: later,
        SubjectConfirmationDataNotOnOrAfter: later,
        NameIDFormat: EMAIL_FORMAT,
        InResponseTo: requestId,
        ...o.values,
      };
      const context = Object.entries(values).reduce(
        (xml, [tag, value]) => xml.replaceAll(`{${tag}}`, xmlText(value)),
        TEMPLATE.replace('{NameID}', xmlText(o.user.nameId)).replace(
          '{AttributeStatement}',
          attributeStatement(o.user),
        ),
      );
      if (o.onlyResponseSigned) {
        // samlify's own signing of the whole Response, the assertion left unsigned.
        const signed = samlify.SamlLib.constructSAMLSignature({
          privateKey: o.foreign ? FOREIGN_KEY : IDP_KEY,
          // As samlify passes it: the certificate's base64 body (it writes the KeyInfo).
          signingCert: (o.foreign ? FOREIGN_CERT : IDP_CERT).replace(/-----[A-Z ]+-----|\s/g, ''),
          signatureAlgorithm: o.signatureAlgorithm ?? RSA_SHA256,
          rawSamlMessage: context,
          isBase64Output: true,
          isMessageSigned: true,
          signatureConfig: {
            prefix: 'ds',
            location: {
              reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']",
              action: 'after',
            },
          },
        } as never) as string;
        return { SAMLResponse: signed, ...(relayState === undefined ? {} : { RelayState: relayState }) };
      }
      const answer = await signer.createLoginResponse(
        sp,
        { extract: { request: { id: requestId } } },
        'post',
        {},
        () => ({
          id: values.ID as string,
          context,
        }),
      );
      return {
        SAMLResponse: (answer as { context: string }).context,
        ...(relayState === undefined ? {} : { RelayState: relayState }),
      };
    },
  };
}
