import { bad, EMOJI, type HostileRow, SQL, TEN_KB, V400 } from './hostile-rows.ts';

// What every group of hostile-endpoints*.ts shares: the running app's values and row builders.

export interface Fixtures {
  adminId: string;
  adminEmail: string;
  adminPassword: string;
  /** A second, ordinary user (the target of updates). */
  targetId: string;
  /** A live refresh token (tampered with by the rows, never used as is). */
  refreshToken: string;
  auditCursor: string;
  /** A real `next_cursor` of the users listing, when that endpoint exists. */
  usersCursor: string;
  /** A Gatehouse access token (refused where an ID token is expected). */
  accessToken: string;
}

export const at = (url: string, rows: HostileRow[]) => rows.map((r) => ({ ...r, url: r.url || url }));
export const query = (base: string, name: string, values: string[], expect = V400): HostileRow[] =>
  values.map((v) => ({ name: `${name}=${v.slice(0, 40)}`, url: `${base}?${name}=${v}`, ...expect }));
export const NOT_FOUND = bad(404, 'not_found');
export const CREDENTIALS = bad(401, 'invalid_credentials');
export const UNAUTHENTICATED = { name: 'no token', url: '', anonymous: true, ...bad(401, 'unauthenticated') };

/** Email look-alikes of an existing address: none may reach its account or be stored beside it. */
export function lookAlikes(email: string): Array<[string, string]> {
  const [local = '', domain = ''] = email.split('@');
  const fullWidth = [...email].map((c) =>
    c >= '!' && c <= '~' ? String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0) : c,
  );
  return [
    ['full-width', fullWidth.join('')],
    ['Cyrillic о in the local part', `${local.replace('o', '\u043e')}@${domain}`],
    ['Cyrillic а in the domain', `${local}@${domain.replace('a', '\u0430')}`],
    ['zero-width space', `${local.slice(0, 2)}\u200b${local.slice(2)}@${domain}`],
    ['RTL override', `\u202e${email}`],
    ['emoji local part', `${EMOJI}@${domain}`],
    ['trailing dot', `${email}.`],
    ['SQL after the address', `${email}' --`],
    ['SQL alone', SQL[0] ?? ''],
    ['10 kB', `${TEN_KB}@${domain}`],
  ];
}

export const USERS = '/api/v1/users';
export const flipLast = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
