// A small MIME reader for tests: enough of RFC 5322 / 2045 / 2046 / 2047 to read what nodemailer
// sends (nested multiparts, quoted-printable and base64 bodies, encoded-word headers, any
// charset TextDecoder knows). It throws on what it cannot read instead of guessing.

export interface ParsedMail {
  /** Lower-cased header names; values unfolded with encoded words decoded; first occurrence wins. */
  headers: Record<string, string>;
  /**
   * The first text/plain body that is not an attachment, CRLF turned into LF; null when absent.
   * A single-part message keeps the final line break that SMTP data requires.
   */
  text: string | null;
  /** The first text/html body that is not an attachment, CRLF turned into LF; null when absent. */
  html: string | null;
}

interface Entity {
  headers: Map<string, string>;
  /** Body bytes as a latin1 string: one char per byte, so binary survives the string handling. */
  body: string;
}

/** Parses a raw RFC 5322 message as received over SMTP. */
export function parseMail(raw: Buffer): ParsedMail {
  const root = readEntity(raw.toString('latin1').replace(/\r?\n/g, '\r\n'));
  const headers: Record<string, string> = {};
  for (const [name, value] of root.headers) headers[name] = decodeHeaderValue(value);
  const result: ParsedMail = { headers, text: null, html: null };
  collectBodies(root, result, 0);
  return result;
}

function readEntity(source: string): Entity {
  const split = source.indexOf('\r\n\r\n');
  const head = split === -1 ? source : source.slice(0, split);
  const body = split === -1 ? '' : source.slice(split + 4);
  const headers = new Map<string, string>();
  // Unfold: a line starting with white space continues the previous header (RFC 5322 2.2.3).
  for (const line of head.replace(/\r\n(?=[ \t])/g, '').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

interface ContentType {
  type: string;
  params: Map<string, string>;
}

function parseContentType(value: string | undefined): ContentType {
  const [type = '', ...rest] = (value ?? 'text/plain; charset=us-ascii').split(';');
  const params = new Map<string, string>();
  for (const param of rest) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    const key = param.slice(0, eq).trim().toLowerCase();
    let val = param.slice(eq + 1).trim();
    if (val.startsWith('"') && val.endsWith('"')) val = val.slice(1, -1).replace(/\\(.)/g, '$1');
    params.set(key, val);
  }
  return { type: type.trim().toLowerCase() || 'text/plain', params };
}

const MAX_DEPTH = 10;

function collectBodies(entity: Entity, out: ParsedMail, depth: number): void {
  if (depth > MAX_DEPTH) throw new Error('MIME nesting too deep');
  const ct = parseContentType(entity.headers.get('content-type'));
  if (ct.type.startsWith('multipart/')) {
    const boundary = ct.params.get('boundary');
    if (!boundary) throw new Error(`${ct.type} without a boundary`);
    for (const part of splitMultipart(entity.body, boundary)) collectBodies(readEntity(part), out, depth + 1);
    return;
  }
  const disposition = (entity.headers.get('content-disposition') ?? '').toLowerCase();
  if (disposition.startsWith('attachment')) return;
  if (ct.type !== 'text/plain' && ct.type !== 'text/html') return;
  const bytes = decodeTransfer(entity.body, entity.headers.get('content-transfer-encoding'));
  const text = decodeBytes(bytes, ct.params.get('charset') ?? 'us-ascii').replace(/\r\n/g, '\n');
  if (ct.type === 'text/plain' && out.text === null) out.text = text;
  if (ct.type === 'text/html' && out.html === null) out.html = text;
}

// RFC 2046 5.1.1: the CRLF before a delimiter belongs to the delimiter, the delimiter line may
// carry trailing white space, and "--boundary--" closes the list.
function splitMultipart(body: string, boundary: string): string[] {
  const segments = `\r\n${body}`.split(`\r\n--${boundary}`);
  const parts: string[] = [];
  let closed = false;
  for (const segment of segments.slice(1)) {
    if (segment.startsWith('--')) {
      closed = true;
      break;
    }
    const lineEnd = segment.indexOf('\r\n');
    parts.push(lineEnd === -1 ? '' : segment.slice(lineEnd + 2));
  }
  if (!closed) throw new Error(`multipart body is missing its closing boundary "--${boundary}--"`);
  return parts;
}

function decodeTransfer(body: string, encoding: string | undefined): Buffer {
  switch ((encoding ?? '7bit').trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    case '7bit':
    case '8bit':
    case 'binary':
      return Buffer.from(body, 'latin1');
    default:
      throw new Error(`unsupported Content-Transfer-Encoding: ${encoding}`);
  }
}

function decodeQuotedPrintable(body: string): Buffer {
  // Soft line breaks ("=" at line end, maybe after transport padding) join lines (RFC 2045 6.7).
  const joined = body.replace(/[ \t]*\r\n/g, '\r\n').replace(/=\r\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const ch = joined.charCodeAt(i);
    const hex = joined.slice(i + 1, i + 3);
    if (ch === 0x3d && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(ch & 0xff);
    }
  }
  return Buffer.from(bytes);
}

function decodeBytes(bytes: Buffer, charset: string): string {
  const label = charset.trim().toLowerCase();
  // TextDecoder maps us-ascii to windows-1252, which accepts every byte: fine for 7-bit text.
  return new TextDecoder(label === 'us-ascii' ? 'utf-8' : label, { fatal: true }).decode(bytes);
}

const ENCODED_WORD = /=\?([^?*]+)(?:\*[^?]*)?\?([bBqQ])\?([^?]*)\?=/g;

/** Decodes RFC 2047 encoded words; raw 8-bit header bytes (SMTPUTF8) are read as UTF-8. */
export function decodeHeaderValue(value: string): string {
  const utf8 = Buffer.from(value, 'latin1').toString('utf8');
  // White space between two adjacent encoded words is not part of the text (RFC 2047 6.2).
  const squeezed = utf8.replace(/(\?=)[ \t]+(?==\?)/g, '$1');
  // Adjacent words of one charset are joined as bytes first: an encoder may split a multi-byte
  // character between two words.
  let out = '';
  let last = 0;
  let pending: { charset: string; bytes: Buffer[] } | null = null;
  const flush = () => {
    if (pending) out += decodeBytes(Buffer.concat(pending.bytes), pending.charset);
    pending = null;
  };
  for (const m of squeezed.matchAll(ENCODED_WORD)) {
    const [word, charset = '', kind = '', payload = ''] = m;
    const index = m.index;
    if (index > last) {
      flush();
      out += squeezed.slice(last, index);
    }
    const bytes =
      kind.toUpperCase() === 'B'
        ? Buffer.from(payload, 'base64')
        : decodeQuotedPrintable(payload.replace(/_/g, ' '));
    const current: { charset: string; bytes: Buffer[] } | null = pending;
    if (current && current.charset === charset.toLowerCase()) current.bytes.push(bytes);
    else {
      flush();
      pending = { charset: charset.toLowerCase(), bytes: [bytes] };
    }
    last = index + word.length;
  }
  flush();
  return out + squeezed.slice(last);
}
