import type { Db } from '../../platform/db/schema.ts';
import { ssoRequiredAt as ssoRequiredQuery } from './organizations.queries.ts';

/**
 * Whether the organization holding this exact, lower-cased e-mail domain has `sso_required` on
 * (docs/api.md §23). Takes the caller's transaction: the sign-in pipeline asks inside its own.
 */
export function ssoRequiredAt(db: Db, domain: string): Promise<boolean> {
  return ssoRequiredQuery(db, domain);
}
