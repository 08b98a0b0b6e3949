import { DOMParser } from '@xmldom/xmldom';

/*
 * The one XML reader of the SAML code (docs/sso.md): @xmldom/xmldom, the parser node-saml itself
 * uses, never a regular expression. A document type declaration (DTD, entity declarations) is
 * refused before anything reads the document: SAML never needs one, and entities are how XML bombs
 * and external-entity reads start.
 */

export const SAML_NS = {
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

/** Why a document was refused (said in the admin API's 400, recorded in a refusal's audit entry). */
export class XmlRefused extends Error {}

const DOCUMENT_TYPE_NODE = 10;

/** Parses a whole XML document; a DTD, a parse error or no root element throws XmlRefused. */
export function parseXml(xml: string): Document {
  // The parser itself keeps the DOCTYPE as a node, which is refused below; the raw check also catches
  // an entity declaration the parser reports only as a warning.
  if (xml.includes('<!DOCTYPE') || xml.includes('<!ENTITY')) {
    throw new XmlRefused('the document has a DTD or entity declaration');
  }
  const problems: string[] = [];
  const doc = new DOMParser({
    locator: {},
    errorHandler: {
      warning: (m: string) => problems.push(m),
      error: (m: string) => problems.push(m),
      fatalError: (m: string) => problems.push(m),
    },
  }).parseFromString(xml, 'text/xml');
  if (problems.length > 0) throw new XmlRefused('the document is not well-formed XML');
  for (let n = doc.firstChild; n !== null; n = n.nextSibling) {
    if (n.nodeType === DOCUMENT_TYPE_NODE) throw new XmlRefused('the document has a DTD');
  }
  if (!doc.documentElement) throw new XmlRefused('the document has no root element');
  return doc;
}

/** Every element of that namespace and local name below `root` (the root included), document order. */
export function elements(root: Document | Element, ns: string, localName: string): Element[] {
  const found: Element[] = [];
  const list = root.getElementsByTagNameNS(ns, localName);
  for (let i = 0; i < list.length; i++) {
    const el = list.item(i);
    if (el) found.push(el);
  }
  if (
    'localName' in root &&
    (root as Element).localName === localName &&
    (root as Element).namespaceURI === ns
  ) {
    found.unshift(root as Element);
  }
  return found;
}

/** The element children of `parent` with that namespace and local name (direct children only). */
export function children(parent: Element, ns: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let n = parent.firstChild; n !== null; n = n.nextSibling) {
    const el = n as Element;
    if (n.nodeType === 1 && el.localName === localName && el.namespaceURI === ns) found.push(el);
  }
  return found;
}

/** The text of an element (its text descendants, comments excluded), trimmed. */
export function textOf(el: Element): string {
  return (el.textContent ?? '').trim();
}
