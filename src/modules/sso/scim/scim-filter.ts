import { type Filter, parse } from 'scim2-parse-filter';
import { ScimError } from './scim-errors.ts';

/*
 * The filters Gatehouse answers (docs/api.md §23), parsed by scim2-parse-filter: on Users
 * `userName eq`, `emails[type eq "work"].value eq` (and `emails.value eq`), `externalId eq`; on
 * Groups `displayName eq`. Attribute names are case-insensitive (RFC 7643 §2.1). Anything else:
 * 400 invalidFilter.
 */

export type UserFilter = { by: 'email'; value: string } | { by: 'externalId'; value: string };

const invalidFilter = (detail: string) => new ScimError(400, detail, 'invalidFilter');

function parsed(text: string): Filter {
  try {
    return parse(text);
  } catch {
    throw invalidFilter('The filter is not valid SCIM filter syntax (RFC 7644 §3.4.2.2)');
  }
}

const is = (path: string, name: string) => path.toLowerCase() === name.toLowerCase();

function eqString(f: Filter, attrPath: string): string | null {
  if (f.op !== 'eq' || !('attrPath' in f) || !is(f.attrPath, attrPath)) return null;
  return typeof f.compValue === 'string' ? f.compValue : null;
}

const unsupported = () =>
  invalidFilter(
    'Supported filters: userName eq "…", emails[type eq "work"].value eq "…", externalId eq "…" (Users); displayName eq "…" (Groups)',
  );

/** A Users filter. */
export function userFilter(text: string): UserFilter {
  const f = parsed(text);
  const userName = eqString(f, 'userName') ?? eqString(f, 'emails.value');
  if (userName !== null) return { by: 'email', value: userName };
  const externalId = eqString(f, 'externalId');
  if (externalId !== null) return { by: 'externalId', value: externalId };
  // `emails[type eq "work"].value eq "x"` parses as an `and` of the value path and `emails.value eq`.
  if (f.op === 'and' && 'filters' in f && f.filters.length === 2) {
    const [path, value] = f.filters;
    if (
      path?.op === '[]' &&
      'valFilter' in path &&
      is(path.attrPath, 'emails') &&
      eqString(path.valFilter, 'type')?.toLowerCase() === 'work' &&
      value !== undefined
    ) {
      const email = eqString(value, 'emails.value');
      if (email !== null) return { by: 'email', value: email };
    }
  }
  throw unsupported();
}

/** A Groups filter: the displayName asked for. */
export function groupFilter(text: string): string {
  const name = eqString(parsed(text), 'displayName');
  if (name === null) throw unsupported();
  return name;
}

/** `startIndex` (1-based, below 1 means 1) and `count` (default 100, at most 1000) of RFC 7644 §3.4.2.4. */
export function paging(query: { startIndex?: string; count?: string }): { start: number; count: number } {
  const int = (v: string | undefined, fallback: number, name: string) => {
    if (v === undefined || v === '') return fallback;
    if (!/^-?\d{1,12}$/.test(v)) throw new ScimError(400, `${name} must be an integer`, 'invalidValue');
    return Number(v);
  };
  const start = Math.max(1, int(query.startIndex, 1, 'startIndex'));
  const count = Math.min(1000, Math.max(0, int(query.count, 100, 'count')));
  return { start, count };
}
