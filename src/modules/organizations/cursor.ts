import { invalid } from './common.ts';

/*
 * Keyset cursors of the organizations and members lists: base64url of the last row's position.
 * Not signed (unlike the users list's): every page is bounded by the server's own checks — the
 * admin's full list, or one organization the caller may read — so a made-up cursor only moves
 * within what the caller may see anyway. A cursor that does not decode to a position is a 400.
 */

export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** The position a cursor holds, checked field by field against `shape`; else 400 at /cursor. */
export function decodeCursor<T extends Record<string, 'string' | 'number'>>(
  token: string,
  shape: T,
): { [K in keyof T]: T[K] extends 'string' ? string : number } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('/cursor', 'is not a valid cursor');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('/cursor', 'is not a valid cursor');
  const record = value as Record<string, unknown>;
  for (const [key, type] of Object.entries(shape)) {
    const v = record[key];
    const ok = type === 'string' ? typeof v === 'string' && v.length <= 512 : Number.isSafeInteger(v);
    if (!ok) throw invalid('/cursor', 'is not a valid cursor');
  }
  return record as { [K in keyof T]: T[K] extends 'string' ? string : number };
}
