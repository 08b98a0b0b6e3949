import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';

/** Seals an endpoint secret with SECRETS_KEY, bound to the endpoint's id. */
export function sealSecret(ctx: AppContext, endpointId: string, secret: string): string {
  const key = ctx.secrets.key();
  if (!key) throw new ApiError('unavailable', { detail: 'Webhooks need SECRETS_KEY on this deployment' });
  return key.seal(Buffer.from(secret), `webhook:${endpointId}`);
}

/**
 * The secrets an attempt is signed with: the current one, and the previous one while its 24 hours
 * after a rotation last. A box that does not open (another key) signs nothing.
 */
export function signingSecrets(
  ctx: AppContext,
  row: {
    endpoint_id: string;
    secret_box: string;
    previous_secret_box: string | null;
    previous_secret_until: number | null;
  },
  now: number,
): string[] {
  const key = ctx.secrets.key();
  if (!key) return [];
  const open = (box: string) => key.open(box, `webhook:${row.endpoint_id}`)?.toString() ?? null;
  const out: string[] = [];
  if (
    row.previous_secret_box !== null &&
    row.previous_secret_until !== null &&
    row.previous_secret_until > now
  ) {
    const old = open(row.previous_secret_box);
    if (old) out.push(old);
  }
  const current = open(row.secret_box);
  if (current) out.push(current);
  return out;
}
