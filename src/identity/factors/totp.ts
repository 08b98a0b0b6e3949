import { randomBytes, randomInt } from 'node:crypto';
import { encodeBase32NoPadding } from '@oslojs/encoding';
import { createTOTPKeyURI, verifyHOTP } from '@oslojs/otp';
import QRCode from 'qrcode';

/** RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/** RFC 4226 §4 recommends 160 bits. */
const SECRET_BYTES = 20;

/** A fresh 160-bit secret. */
export function newTotpSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

/** The secret as people type it (base32, no padding). */
export function totpSecretText(secret: Uint8Array): string {
  return encodeBase32NoPadding(secret);
}

/** `otpauth://totp/APP_NAME:email?issuer=APP_NAME&…` (the Key Uri Format authenticator apps read). */
export function otpauthUrl(appName: string, email: string, secret: Uint8Array): string {
  return createTOTPKeyURI(appName, email, secret, TOTP_PERIOD_S, TOTP_DIGITS);
}

/** The otpauth URL as an SVG document (a QR code to scan). */
export function qrSvg(url: string): Promise<string> {
  return QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}

/** The time step of a moment. */
export function currentStep(now = Date.now()): number {
  return Math.floor(now / 1000 / TOTP_PERIOD_S);
}

/**
 * The step a code belongs to, within ±1 step of now (clock drift), or null. Later steps are tried
 * first, so the replay guard records the highest step the code proves. Every candidate is compared
 * in constant time by the library.
 */
export function matchingStep(secret: Uint8Array, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const step = currentStep(now);
  let found: number | null = null;
  for (const candidate of [step + 1, step, step - 1]) {
    if (verifyHOTP(secret, BigInt(candidate), TOTP_DIGITS, code) && found === null) found = candidate;
  }
  return found;
}

// The RFC 4648 base32 alphabet (no 0/1/8/9, so no O/0 or I/1 confusion); typing ignores case.
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export const RECOVERY_CODE_COUNT = 10;
/**
 * ASVS 5.0 6.5.2: a lookup secret of at least 112 bits may be stored under a plain keyed hash;
 * 25 base32 characters carry 125. Codes issued before carried 10 characters (50 bits): they still
 * work until used or regenerated (normalizeRecoveryCode accepts both), none is issued any more.
 */
export const RECOVERY_CODE_CHARS = 25;
const LEGACY_RECOVERY_CODE_CHARS = 10;

/** Ten recovery codes of 125 bits each, shown as `xxxxx-xxxxx-xxxxx-xxxxx-xxxxx` (lower case, easier to read). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let text = '';
    for (let i = 0; i < RECOVERY_CODE_CHARS; i++) text += BASE32[randomInt(32)];
    return (text.match(/.{5}/g) ?? []).join('-').toLowerCase();
  });
}

/**
 * A typed recovery code in its canonical form (case, dashes and spaces ignored), or null when it
 * cannot be one: 25 characters, or the 10 of a code issued before the 125-bit codes.
 */
export function normalizeRecoveryCode(typed: string): string | null {
  const text = typed.replace(/[\s-]/g, '').toUpperCase();
  if (!/^[A-Z2-7]+$/.test(text)) return null;
  return text.length === RECOVERY_CODE_CHARS || text.length === LEGACY_RECOVERY_CODE_CHARS ? text : null;
}
