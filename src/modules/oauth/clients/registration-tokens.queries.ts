import type { Db } from '../../../platform/db/schema.ts';

/** oidc-provider's model name for initial access tokens (stored by the adapter like every model). */
const MODEL = 'InitialAccessToken';

/**
 * Spends an unexpired registration token: one statement deletes it, so of two registrations
 * presenting the same token exactly one sees `true` (docs/api.md §16: a secret's use is reserved
 * atomically before the work).
 */
export async function spendRegistrationToken(db: Db, idHash: string, now: number): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_models')
    .where('model', '=', MODEL)
    .where('id_hash', '=', idHash)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
