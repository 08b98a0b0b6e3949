import type { SamlSettings } from './saml-config.ts';
import { SAML_SKEW_MS } from './saml-sp.ts';
import { children, elements, parseXml, SAML_NS, textOf, XmlRefused } from './saml-xml.ts';

/*
 * Gatehouse's own checks of a SAML response (docs/api.md §23, "Checked fields"), beside node-saml's
 * signature validation: what the library does not check, or checks in a way we do not rely on alone.
 * `checkEnvelope` runs before the library sees the document; `checkAssertion` runs on the assertion
 * the library verified (the XML its signature covers), never on the unsigned envelope's copy.
 */

/** A refused response; `reason` is recorded in the audit entry, never answered. */
export class SamlRefused extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}

// Only SHA-2 signatures and digests: SHA-1 (and anything unknown) is refused.
const SIGNATURE_METHODS = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384',
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512',
]);
const DIGEST_METHODS = new Set([
  'http://www.w3.org/2001/04/xmlenc#sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512',
]);

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

/** What the envelope says, for the InResponseTo check. */
export interface Envelope {
  inResponseTo: string | null;
  assertionId: string;
}

/**
 * The Response as a whole: no DTD, a `samlp:Response` root, exactly one `Assertion` anywhere in the
 * document and no `EncryptedAssertion` (a second assertion hidden in Extensions or an Advice is how
 * signature wrapping starts), SHA-2 signatures only, `Destination` (when present) our ACS URL, the
 * Response's `Issuer` (when present) the IdP's entity id.
 */
export function checkEnvelope(xml: string, s: SamlSettings, acs: string): Envelope {
  let doc: Document;
  try {
    doc = parseXml(xml);
  } catch (err) {
    if (err instanceof XmlRefused) throw new SamlRefused(err.message);
    throw err;
  }
  const root = doc.documentElement as Element;
  if (root.localName !== 'Response' || root.namespaceURI !== SAML_NS.protocol) {
    throw new SamlRefused('not a SAML Response');
  }
  if (elements(doc, SAML_NS.assertion, 'EncryptedAssertion').length > 0) {
    throw new SamlRefused('encrypted assertions are not accepted');
  }
  const assertions = elements(doc, SAML_NS.assertion, 'Assertion');
  if (assertions.length !== 1)
    throw new SamlRefused(`${assertions.length} assertions (exactly one is accepted)`);
  const assertion = assertions[0] as Element;
  if (assertion.parentNode !== root) throw new SamlRefused('the assertion is not a child of the Response');
  for (const m of elements(doc, SAML_NS.dsig, 'SignatureMethod')) {
    if (!SIGNATURE_METHODS.has(m.getAttribute('Algorithm') ?? ''))
      throw new SamlRefused('signature algorithm refused (SHA-1 or unknown)');
  }
  for (const m of elements(doc, SAML_NS.dsig, 'DigestMethod')) {
    if (!DIGEST_METHODS.has(m.getAttribute('Algorithm') ?? ''))
      throw new SamlRefused('digest algorithm refused (SHA-1 or unknown)');
  }
  const destination = root.getAttribute('Destination');
  if (destination && destination !== acs) throw new SamlRefused('Destination is not this ACS URL');
  for (const issuer of children(root, SAML_NS.assertion, 'Issuer')) {
    if (textOf(issuer) !== s.idp_entity_id) throw new SamlRefused('the Response Issuer is not idp_entity_id');
  }
  const assertionId = assertion.getAttribute('ID') ?? '';
  if (assertionId === '') throw new SamlRefused('the assertion has no ID');
  const inResponseTo = root.getAttribute('InResponseTo') || null;
  return { inResponseTo, assertionId };
}

/** What a verified assertion says about the person. */
export interface AssertedPerson {
  assertionId: string;
  nameId: string;
  email: string | null;
  name: string | null;
  /** The InResponseTo of the bearer confirmation, or null. */
  inResponseTo: string | null;
  /** Until when the assertion id must be remembered: its latest NotOnOrAfter plus the skew. */
  rememberUntil: number;
}

function time(el: Element, attr: string): number | null {
  const v = el.getAttribute(attr);
  if (!v) return null;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new SamlRefused(`${attr} is not a time`);
  return t;
}

function window(el: Element, what: string, now: number): number | null {
  const notBefore = time(el, 'NotBefore');
  const notOnOrAfter = time(el, 'NotOnOrAfter');
  if (notBefore !== null && now + SAML_SKEW_MS < notBefore) throw new SamlRefused(`${what} is not valid yet`);
  if (notOnOrAfter !== null && now - SAML_SKEW_MS >= notOnOrAfter)
    throw new SamlRefused(`${what} has expired`);
  return notOnOrAfter;
}

/**
 * The assertion node-saml verified (its signed XML): the same ID as the envelope's only assertion,
 * Issuer = idp_entity_id, Conditions' window and Audience, a bearer SubjectConfirmationData with
 * Recipient = the ACS URL and a NotOnOrAfter in the window, a NameID; the e-mail and name read
 * from the attributes of `attribute_mapping` (else the NameID is the e-mail).
 */
export function checkAssertion(
  verifiedXml: string,
  envelope: Envelope,
  s: SamlSettings,
  expected: { acs: string; audience: string },
  now = Date.now(),
): AssertedPerson {
  const doc = parseXml(verifiedXml);
  const a = doc.documentElement as Element;
  if (a.localName !== 'Assertion' || a.namespaceURI !== SAML_NS.assertion)
    throw new SamlRefused('not an assertion');
  if (a.getAttribute('ID') !== envelope.assertionId)
    throw new SamlRefused('the signed assertion is not the one in the response');
  const issuer = children(a, SAML_NS.assertion, 'Issuer')[0];
  if (!issuer || textOf(issuer) !== s.idp_entity_id)
    throw new SamlRefused('the assertion Issuer is not idp_entity_id');
  const conditions = children(a, SAML_NS.assertion, 'Conditions');
  if (conditions.length !== 1) throw new SamlRefused('the assertion needs exactly one Conditions');
  const cond = conditions[0] as Element;
  const condEnd = window(cond, 'Conditions', now);
  const audiences = children(cond, SAML_NS.assertion, 'AudienceRestriction');
  if (audiences.length === 0) throw new SamlRefused('no AudienceRestriction');
  // Every AudienceRestriction must name us (each one restricts the assertion: SAML core §2.5.1.4).
  for (const r of audiences) {
    if (!children(r, SAML_NS.assertion, 'Audience').some((x) => textOf(x) === expected.audience)) {
      throw new SamlRefused('the Audience is not this service provider');
    }
  }
  const subject = children(a, SAML_NS.assertion, 'Subject')[0];
  if (!subject) throw new SamlRefused('no Subject');
  const nameIdEl = children(subject, SAML_NS.assertion, 'NameID')[0];
  const nameId = nameIdEl ? textOf(nameIdEl) : '';
  if (nameId === '') throw new SamlRefused('no NameID');
  const bearer = children(subject, SAML_NS.assertion, 'SubjectConfirmation').filter(
    (c) => c.getAttribute('Method') === BEARER,
  );
  if (bearer.length !== 1)
    throw new SamlRefused('the assertion needs exactly one bearer SubjectConfirmation');
  const data = children(bearer[0] as Element, SAML_NS.assertion, 'SubjectConfirmationData')[0];
  if (!data) throw new SamlRefused('no SubjectConfirmationData');
  if (data.getAttribute('Recipient') !== expected.acs) throw new SamlRefused('Recipient is not this ACS URL');
  const dataEnd = window(data, 'SubjectConfirmationData', now);
  if (dataEnd === null) throw new SamlRefused('SubjectConfirmationData has no NotOnOrAfter');
  const confirmedFor = data.getAttribute('InResponseTo') || null;
  if (confirmedFor !== null && envelope.inResponseTo !== null && confirmedFor !== envelope.inResponseTo) {
    throw new SamlRefused('the two InResponseTo differ');
  }
  const mapping = s.attribute_mapping;
  const attribute = (name: string | undefined): string | null => {
    if (!name) return null;
    for (const st of children(a, SAML_NS.assertion, 'AttributeStatement')) {
      for (const at of children(st, SAML_NS.assertion, 'Attribute')) {
        if (at.getAttribute('Name') !== name) continue;
        const v = children(at, SAML_NS.assertion, 'AttributeValue')[0];
        if (v) return textOf(v) || null;
      }
    }
    return null;
  };
  return {
    assertionId: envelope.assertionId,
    nameId,
    email: mapping?.email ? attribute(mapping.email) : nameId,
    name: mapping?.name ? attribute(mapping.name) : null,
    inResponseTo: confirmedFor ?? envelope.inResponseTo,
    rememberUntil: Math.max(condEnd ?? 0, dataEnd) + SAML_SKEW_MS,
  };
}
