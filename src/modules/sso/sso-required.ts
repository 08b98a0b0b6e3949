import type { AddressCheckListener } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { ssoRequiredAt } from '../organizations/index.ts';
import { providerForDomain } from '../providers/index.ts';

/**
 * docs/api.md §23 `sso_required`: the sign-in pipeline's address check (ctx.signIn.checkAddress),
 * asked by signIn for every way in and by the endpoints before a sign-in (a mailed code, a reset, a
 * sign-up) before they send or write anything. An address at a domain of an organization with
 * `sso_required` is refused with 403 `sso_required` carrying the connection's `start_url`, unless:
 * the sign-in comes through that connection itself; the account is an admin's (the way back in when
 * the IdP fails); the `sso` module is off; or no enabled connection claims the domain (there is then
 * nowhere to send the person, and refusing would lock everyone out: docs/sso.md, "SSO required").
 * Whether the address has an account changes nothing but the admin exception (no enumeration).
 */
export function ssoRequiredCheck(ctx: AppContext): AddressCheckListener {
  return async (db, check) => {
    if (!ctx.modules.isEnabled('sso') || !ctx.modules.isEnabled('organizations')) return;
    const at = check.email.lastIndexOf('@');
    if (at < 1) return;
    const domain = check.email.slice(at + 1).toLowerCase();
    if (!(await ssoRequiredAt(db, domain))) return;
    const connection = await providerForDomain(ctx, domain, db);
    if (connection === null || check.provider === connection.name) return;
    if (check.user?.role === 'admin') return;
    throw ssoRequired(ctx, connection.name);
  };
}

/** 403 `sso_required` with where the connection starts (`<PUBLIC_URL>/api/v1/idp/<name>/start`). */
export function ssoRequired(ctx: AppContext, connection: string): ApiError {
  const base = ctx.config.publicUrl.replace(/\/+$/, '');
  return new ApiError('sso_required', {
    detail: 'This organization signs in with single sign-on only: continue at start_url',
    extensions: { start_url: `${base}/api/v1/idp/${connection}/start` },
  });
}
