import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The successor of a rotated refresh token, sealed so that only a holder of the rotated token can
 * open it (docs/api.md §5: within the grace window the same token yields the same pair, yet no usable
 * token is stored in plaintext). The key is HKDF-SHA256 of the presented token, salted with the
 * row id; the database holds only SHA-256(token), from which the key cannot be derived.
 */
export interface Successor {
  accessToken: string;
  /** `exp` of the access token, epoch seconds (a replay answers with the remaining lifetime). */
  accessExp: number;
  refreshToken: string;
}

const VERSION = 'v1';
const INFO = Buffer.from('gatehouse refresh-token successor v1');

function keyFor(presentedToken: string, rowId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', presentedToken, rowId, INFO, 32));
}

/** Encrypts a successor pair under a key derived from the token being rotated (AES-256-GCM). */
export function sealSuccessor(presentedToken: string, rowId: string, successor: Successor): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(presentedToken, rowId), iv);
  // The row id is authenticated too, so a box copied onto another row does not open.
  cipher.setAAD(Buffer.from(rowId));
  const plaintext = Buffer.from(
    JSON.stringify({ a: successor.accessToken, e: successor.accessExp, r: successor.refreshToken }),
  );
  const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** Opens a box sealed by sealSuccessor; null when it does not open (wrong token, tampered, unknown format). */
export function openSuccessor(presentedToken: string, rowId: string, box: string): Successor | null {
  const [version, ivText, sealedText] = box.split('.');
  if (version !== VERSION || !ivText || !sealedText) return null;
  const iv = Buffer.from(ivText, 'base64url');
  const sealed = Buffer.from(sealedText, 'base64url');
  if (iv.length !== 12 || sealed.length <= 16) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(presentedToken, rowId), iv);
    decipher.setAAD(Buffer.from(rowId));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const plaintext = Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - 16)),
      decipher.final(),
    ]);
    const parsed = JSON.parse(plaintext.toString('utf8')) as { a?: unknown; e?: unknown; r?: unknown };
    if (typeof parsed.a !== 'string' || typeof parsed.e !== 'number' || typeof parsed.r !== 'string')
      return null;
    return { accessToken: parsed.a, accessExp: parsed.e, refreshToken: parsed.r };
  } catch {
    return null;
  }
}
