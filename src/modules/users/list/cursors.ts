import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { readCursorKey } from '../../../identity/index.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { DB } from '../../../platform/db/schema.ts';

/*
 * Opaque pagination cursors: base64url(JSON payload) "." base64url(HMAC-SHA256 of it, 128 bits).
 * The key is generated at migration time and shared through the database, so a cursor made by one
 * instance pages on another. A cursor that was altered, truncated or made for another sort (or
 * another search) is refused with 400 validation_failed; it never reaches SQL unchecked.
 */

const MAC_BYTES = 16;

/** Signs and checks cursors with one key. */
export interface CursorCodec {
  encode(payload: Record<string, unknown>): string;
  /** The payload of a well-signed cursor, else throws 400 validation_failed. */
  decode(token: string): Record<string, unknown>;
}

/** A codec over a raw key. */
export function createCursorCodec(key: Buffer): CursorCodec {
  const mac = (data: string) => createHmac('sha256', key).update(data).digest().subarray(0, MAC_BYTES);
  return {
    encode(payload) {
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${mac(data).toString('base64url')}`;
    },
    decode(token) {
      const dot = token.indexOf('.');
      if (dot <= 0) throw invalidCursor();
      const data = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(data))) throw invalidCursor();
      try {
        const payload: unknown = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
        if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
          return payload as Record<string, unknown>;
        }
      } catch {
        // fall through: a signed but unreadable payload is as invalid as a forged one
      }
      throw invalidCursor();
    },
  };
}

/** The 400 every unusable cursor gets. */
export function invalidCursor(detail = 'The cursor is not valid for this request'): ApiError {
  return new ApiError('validation_failed', {
    detail,
    errors: [{ path: '/cursor', message: 'is not a valid cursor' }],
  });
}

/** Loads the cursor key stored by the users_scale migration. */
export async function loadCursorCodec(db: Kysely<DB>): Promise<CursorCodec> {
  return createCursorCodec(Buffer.from(await readCursorKey(db), 'base64url'));
}
