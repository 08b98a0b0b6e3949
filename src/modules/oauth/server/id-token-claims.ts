import type { AccountClaims, KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { askHook } from './claims-hook.ts';
import { organizationFacts } from './organization-tokens.ts';

/*
 * The claims hook for the authorization server's ID tokens (docs/api.md §21, docs/claims-hook.md).
 * The library has no per-ID-token hook like `extraTokenClaims`; what it has is the account's
 * documented `claims(use, scope, claims, rejected)`, asked with `use === 'id_token'` just before an
 * ID token is signed, and the `claims` configuration, which releases only names a granted scope
 * lists. So the hook is asked from `claims()`, and the names it may add are declared by the admin
 * (TOKEN_HOOK_ID_TOKEN_CLAIMS) under the `openid` scope. The hook is asked for every ID token while a
 * hook is configured, declared names or not: §21 promises the call before any ID token is signed,
 * and a receiver may deny one.
 */

/** The hook's answer of an ID token, asked before the refresh token was used, by request. */
const askedBeforeRotation = new WeakMap<object, Record<string, unknown>>();

/**
 * The account's `claims()` for findAccount: `base` for userinfo and every other use; for an ID
 * token, `base` and the hook's claims whose names TOKEN_HOOK_ID_TOKEN_CLAIMS declares. A refusal
 * under TOKEN_HOOK_FAILURE=deny throws the token endpoint's `server_error` (claims-hook.ts).
 */
export function accountClaims(
  ctx: AppContext,
  // The library's request context (its typings say unknown): the request the answer belongs to.
  given: unknown,
  accountId: string,
  grantId: string | undefined,
  claimsFor: (use: string, scope: string) => Promise<AccountClaims>,
) {
  return async (use: string, scope: string): Promise<AccountClaims> => {
    const base = await claimsFor(use, scope);
    const hook = ctx.config.tokenHook;
    const kctx = typeof given === 'object' && given !== null ? (given as KoaContextWithOIDC) : undefined;
    if (use !== 'id_token' || hook === null || kctx === undefined) return base;
    let answer = askedBeforeRotation.get(kctx);
    if (answer === undefined) {
      const clientId = (kctx.oidc?.client as { clientId: string } | undefined)?.clientId ?? null;
      // The grant's organization, as the access tokens' calls name it (organization-tokens.ts).
      const { organization } = await organizationFacts(ctx, kctx, accountId, grantId, false);
      answer = await askHook(ctx, accountId, clientId, { ...base }, organization, 'id_token');
      askedBeforeRotation.set(kctx, answer);
    }
    const declared = new Set(hook.idTokenClaims);
    const kept: Record<string, unknown> = {};
    const ignored: string[] = [];
    for (const [name, value] of Object.entries(answer)) {
      if (declared.has(name)) kept[name] = value;
      else ignored.push(name);
    }
    if (ignored.length > 0) {
      // Names only (the receiver's keys, never their values): what to add to the setting.
      ctx.log.warn(
        { claims: ignored.slice(0, 20), token: 'id_token', user_id: accountId },
        'claims hook answered ID token claims not in TOKEN_HOOK_ID_TOKEN_CLAIMS: left out',
      );
    }
    return { ...base, ...kept };
  };
}

/**
 * `rotateRefreshToken` around the access-token side (claims-hook.ts): on a refresh grant that will
 * issue an ID token (scope openid), the hook is asked for it before the library consumes the
 * refresh token, so a refusal leaves that token usable; the library's later `claims('id_token')`
 * reuses the answer.
 */
export function rotateAfterIdTokenHook(
  ctx: AppContext,
  inner: (kctx: KoaContextWithOIDC) => Promise<boolean>,
) {
  return async (kctx: KoaContextWithOIDC): Promise<boolean> => {
    const rotate = await inner(kctx);
    if (ctx.config.tokenHook === null) return rotate;
    const { oidc } = kctx;
    const refresh = oidc.entities.RefreshToken as { scopes: Set<string> } | undefined;
    const account = oidc.entities.Account as
      | { claims(use: string, scope: string, claims: object, rejected: string[]): Promise<unknown> }
      | undefined;
    if (!refresh || !account) return rotate;
    const scopes: Set<string> = oidc.params?.scope
      ? (oidc.requestParamScopes as Set<string>)
      : refresh.scopes;
    if (scopes.has('openid')) await account.claims('id_token', [...scopes].join(' '), {}, []);
    return rotate;
  };
}
