import { X509Certificate } from 'node:crypto';
import { ApiError } from '../../../platform/api-error.ts';
import { children, elements, parseXml, SAML_NS, textOf, XmlRefused } from './saml-xml.ts';

/** A SAML connection's settings (docs/api.md §23), as stored (JSON) and answered. */
export interface SamlSettings {
  idp_entity_id: string;
  idp_sso_url: string;
  /** PEM certificates; the assertion must be signed by one of them. */
  idp_certificates: string[];
  /** Attribute names for the e-mail and the name; null: the NameID is the e-mail and the name is null. */
  attribute_mapping: { email?: string | undefined; name?: string | undefined } | null;
  allow_idp_initiated: boolean;
}

/** The `saml` block of the admin API's body (all optional: with `idp_metadata_xml`, only the last two). */
export interface SamlInput {
  idp_entity_id?: string | undefined;
  idp_sso_url?: string | undefined;
  idp_certificates?: string[] | undefined;
  attribute_mapping?: { email?: string | undefined; name?: string | undefined } | null | undefined;
  allow_idp_initiated?: boolean | undefined;
}

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const MAX_CERTIFICATES = 8;

const invalid = (detail: string) => new ApiError('validation_failed', { detail });

/** A certificate as PEM, from PEM or from the bare base64 of metadata's X509Certificate; 400 when it does not parse. */
export function normalizeCertificate(value: string, field: string): string {
  const body = value
    .replace('-----BEGIN CERTIFICATE-----', '')
    .replace('-----END CERTIFICATE-----', '')
    .replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw invalid(`${field} is not a certificate`);
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
  } catch {
    throw invalid(`${field} is not a certificate that parses`);
  }
  return pem;
}

/** `idp_sso_url`: absolute https (http only on a loopback host); a query is kept (Google Workspace has one). */
export function checkSsoUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('saml.idp_sso_url must be an absolute URL');
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw invalid('saml.idp_sso_url must be an https URL (http only on a loopback host)');
  }
  if (url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalid('saml.idp_sso_url must not carry a fragment or credentials');
  }
  return value;
}

/**
 * What an IdP's metadata document says (docs/api.md §23, "Configuration"): its entityID, the
 * SingleSignOnService with the HTTP-Redirect binding, and every KeyDescriptor whose `use` is
 * `signing` or absent. A document lacking one of them, or whose certificate does not parse: 400.
 */
export function readIdpMetadata(
  xml: string,
): Pick<SamlSettings, 'idp_entity_id' | 'idp_sso_url' | 'idp_certificates'> {
  let doc: ReturnType<typeof parseXml>;
  try {
    doc = parseXml(xml);
  } catch (err) {
    if (err instanceof XmlRefused) throw invalid(`idp_metadata_xml: ${err.message}`);
    throw err;
  }
  const root = doc.documentElement as Element;
  const entity =
    root.localName === 'EntityDescriptor' && root.namespaceURI === SAML_NS.metadata
      ? root
      : elements(doc, SAML_NS.metadata, 'EntityDescriptor')[0];
  if (!entity) throw invalid('idp_metadata_xml has no EntityDescriptor');
  const entityId = entity.getAttribute('entityID') ?? '';
  if (entityId === '') throw invalid('idp_metadata_xml has no entityID');
  const idp = children(entity, SAML_NS.metadata, 'IDPSSODescriptor')[0];
  if (!idp) throw invalid('idp_metadata_xml has no IDPSSODescriptor');
  const sso = children(idp, SAML_NS.metadata, 'SingleSignOnService').find(
    (s) => s.getAttribute('Binding') === REDIRECT_BINDING,
  );
  const location = sso?.getAttribute('Location') ?? '';
  if (location === '')
    throw invalid('idp_metadata_xml has no SingleSignOnService with the HTTP-Redirect binding');
  const certificates: string[] = [];
  for (const kd of children(idp, SAML_NS.metadata, 'KeyDescriptor')) {
    const use = kd.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const cert of elements(kd, SAML_NS.dsig, 'X509Certificate')) {
      certificates.push(normalizeCertificate(textOf(cert), "idp_metadata_xml's signing certificate"));
    }
  }
  if (certificates.length === 0) throw invalid('idp_metadata_xml has no signing certificate');
  return {
    idp_entity_id: entityId,
    idp_sso_url: checkSsoUrl(location),
    idp_certificates: dedupe(certificates),
  };
}

function dedupe(pems: string[]): string[] {
  return [...new Set(pems)];
}

/**
 * The whole settings of a SAML connection from the admin API's body: from `idp_metadata_xml` (then
 * the `saml` block holds only `attribute_mapping` and `allow_idp_initiated`) or from the block's
 * fields, merged over what is stored on update. Every field checked; 400 `validation_failed`.
 */
export function samlSettingsOf(
  given: SamlInput | undefined,
  metadataXml: string | undefined,
  stored: SamlSettings | null,
): SamlSettings {
  const block = given ?? {};
  let base: Partial<SamlSettings> = stored ?? {};
  if (metadataXml !== undefined) {
    if (
      block.idp_entity_id !== undefined ||
      block.idp_sso_url !== undefined ||
      block.idp_certificates !== undefined
    ) {
      throw invalid(
        'with idp_metadata_xml, the saml block takes only attribute_mapping and allow_idp_initiated',
      );
    }
    base = { ...base, ...readIdpMetadata(metadataXml) };
  }
  const entityId = block.idp_entity_id ?? base.idp_entity_id;
  const ssoUrl = block.idp_sso_url ?? base.idp_sso_url;
  const certs = block.idp_certificates ?? base.idp_certificates;
  if (!entityId) throw invalid('a saml provider needs saml.idp_entity_id (or idp_metadata_xml)');
  if (!ssoUrl) throw invalid('a saml provider needs saml.idp_sso_url (or idp_metadata_xml)');
  if (!certs || certs.length === 0) {
    throw invalid('a saml provider needs saml.idp_certificates (or idp_metadata_xml)');
  }
  if (certs.length > MAX_CERTIFICATES) throw invalid(`at most ${MAX_CERTIFICATES} idp_certificates`);
  const mapping =
    block.attribute_mapping !== undefined ? block.attribute_mapping : (base.attribute_mapping ?? null);
  return {
    idp_entity_id: entityId,
    idp_sso_url: checkSsoUrl(ssoUrl),
    idp_certificates: dedupe(certs.map((c, i) => normalizeCertificate(c, `saml.idp_certificates[${i}]`))),
    attribute_mapping: mapping && (mapping.email || mapping.name) ? mapping : null,
    allow_idp_initiated: block.allow_idp_initiated ?? base.allow_idp_initiated ?? false,
  };
}
