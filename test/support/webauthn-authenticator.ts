import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/*
 * A software WebAuthn authenticator for the tests: ES256 keys from node:crypto, `none` attestation,
 * and the few CBOR shapes WebAuthn needs, encoded by the tiny encoder below (RFC 8949 §3).
 */

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>;

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** Encodes integers, byte and text strings, arrays and maps: all WebAuthn's attestation needs. */
export function cborEncode(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cborEncode)]);
  const parts: Buffer[] = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cborEncode(k), cborEncode(v));
  return Buffer.concat(parts);
}

const b64url = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export interface AuthenticatorFlags {
  /** User verified (UV). Default true. */
  uv?: boolean;
  /** Backup eligible and backed up (BE, BS): a synced passkey. Default false. */
  backedUp?: boolean;
}

/** One credential held by the software authenticator. */
export class SoftCredential {
  readonly id = randomBytes(16);
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly userHandle: string;
  counter: number;

  constructor(userHandle: string, counter = 0) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.userHandle = userHandle;
    this.counter = counter;
  }

  get idText(): string {
    return b64url(this.id);
  }

  private coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return cborEncode(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, 'base64url')],
        [-3, Buffer.from(jwk.y as string, 'base64url')],
      ]),
    );
  }

  private flags(f: AuthenticatorFlags, attested: boolean): number {
    let flags = 0x01; // UP
    if (f.uv ?? true) flags |= 0x04;
    if (f.backedUp) flags |= 0x08 | 0x10;
    if (attested) flags |= 0x40;
    return flags;
  }

  /** navigator.credentials.create(): the RegistrationResponseJSON for creation options. */
  register(
    options: { challenge: string; rp: { id?: string } },
    origin: string,
    f: AuthenticatorFlags = {},
  ): Record<string, unknown> {
    const rpId = options.rp.id as string;
    const clientData = JSON.stringify({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.id.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.flags(f, true)]),
      count,
      Buffer.alloc(16),
      idLen,
      this.id,
      this.coseKey(),
    ]);
    const attestationObject = cborEncode(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: this.idText,
      rawId: this.idText,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get(): the AuthenticationResponseJSON; the counter advances by `step` (0: stays). */
  assert(
    options: { challenge: string; rpId?: string },
    origin: string,
    f: AuthenticatorFlags & { step?: number; rpId?: string } = {},
  ): Record<string, unknown> {
    this.counter += f.step ?? 0;
    const rpId = (f.rpId ?? options.rpId) as string;
    const clientData = JSON.stringify({
      type: 'webauthn.get',
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags(f, false)]), count]);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return {
      id: this.idText,
      rawId: this.idText,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: this.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
