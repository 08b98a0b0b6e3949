import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { accountClaims } from './id-token-claims.ts';
import { findAccountRow } from './models.queries.ts';
import { accountOrganizationClaims } from './organization-tokens.ts';

/**
 * The library's `findAccount` (docs/api.md §17): an active user, and the claims it releases by
 * scope — `email`, `profile`, `organizations` and the grant's `org_id` (§21) — through the claims
 * hook for an ID token (id-token-claims.ts). A disabled or deleted account is no account: its
 * tokens stop working.
 */
export function findAccount(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC, sub: string, token?: { grantId?: string }) => {
    const user = await findAccountRow(ctx.db, sub);
    if (user?.status !== 'active') return undefined;
    return {
      accountId: user.id,
      // For an ID token, with the claims hook's declared claims (id-token-claims.ts).
      claims: accountClaims(ctx, kctx, user.id, token?.grantId, async (use: string, scope: string) => ({
        sub: user.id,
        email: user.email,
        email_verified: Boolean(user.email_verified),
        name: user.name,
        updated_at: Math.floor(Number(user.updated_at) / 1000),
        ...(await accountOrganizationClaims(ctx, kctx, user.id, use, scope, token?.grantId)),
      })),
    };
  };
}
