import { reserveOrThrow } from '../../identity/budgets/attempt-budget.ts';
import { addressBucket } from '../../identity/budgets/throttle.ts';
import { normalizeEmail } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { providerForDomain } from '../providers/index.ts';

/** docs/api.md §23: 20 discoveries a minute per client address (IPv4, or IPv6 /64). */
export const DISCOVER_LIMIT = 20;
const DISCOVER_WINDOW_MS = 60_000;

/**
 * `POST /api/v1/idp/discover`: the enabled connection whose `domains` hold the address's exact,
 * lower-cased domain, with its start URL, else `{"provider": null}`. It says which domains have
 * single sign-on (public knowledge: the sign-in page shows it), never whether an account exists.
 */
export async function discover(ctx: AppContext, email: string, ip: string | null) {
  await reserveOrThrow(
    ctx.db,
    [{ key: `idp_discover:addr:${addressBucket(ip)}`, limit: DISCOVER_LIMIT, windowMs: DISCOVER_WINDOW_MS }],
    'Too many discoveries; try again later',
  );
  const normalized = normalizeEmail(email);
  const at = normalized?.lastIndexOf('@') ?? -1;
  if (normalized === null || at < 1 || !normalized.slice(at + 1).includes('.')) {
    throw new ApiError('validation_failed', {
      detail: 'body/email must be an e-mail address',
      errors: [{ path: '/email', message: 'must be an e-mail address' }],
    });
  }
  const found = await providerForDomain(ctx, normalized.slice(at + 1));
  if (found === null) return { provider: null };
  const base = ctx.config.publicUrl.replace(/\/+$/, '');
  return {
    provider: {
      name: found.name,
      display_name: found.displayName,
      start_url: `${base}/api/v1/idp/${found.name}/start`,
    },
  };
}
