import { hasIdentities } from '../../../identity/index.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { Db, UserOrigin, UserRow } from '../../../platform/db/schema.ts';

/**
 * The linking rules of docs/api.md §16 ("Linking by e-mail is safe"), in one place: every way an
 * external identity can be linked to an existing account by its e-mail address asks here
 * (POST /api/v1/idp/verify today; a provider of the `providers` module passes its own settings).
 * The caller has already applied the checks of §7 and §12: the provider marked the address verified,
 * and the account is neither disabled nor invited.
 */
export interface LinkPolicy {
  /** `OIDC_LINK_BY_EMAIL` (or a provider's `link_by_email`). */
  readonly linkByEmail: boolean;
  /** `OIDC_LINK_ADMINS` (or a provider's `link_admins`); default false. */
  readonly linkAdmins: boolean;
}

/** Why an identity was not linked by e-mail; recorded in the refusal's audit entry, never answered. */
export type LinkRefusal =
  | 'link_by_email_off'
  | 'admin_account'
  | 'address_not_proven'
  | 'unverified_with_identity';

/**
 * Origins whose address the operator vouches for (an admin made the account: form A's managed
 * accounts). Not `signup` or `unknown` (anyone may have typed the address), nor `import` (the
 * import states `email_verified` itself), nor `invitation`/`idp` (those prove the address when the
 * account is taken up, so an unverified one has lost or never had that proof).
 */
const OPERATOR_VOUCHED: ReadonlySet<UserOrigin> = new Set<UserOrigin>(['admin', 'first_admin']);

/** An ApiError that says which rule refused the link, for the audit entry. */
export class LinkRefused extends ApiError {
  readonly refusal: LinkRefusal;
  constructor(refusal: LinkRefusal) {
    super('identity_link_required', {
      detail:
        'An account with this e-mail address exists but cannot be linked to this identity automatically; ' +
        'sign in another way and link it from your account, or ask an operator to link it',
    });
    this.refusal = refusal;
  }
}

/**
 * Which rule forbids linking an unknown identity to `holder` by e-mail, or null when it may link.
 * `holderHasIdentities`: whether another identity is already linked to the account.
 */
export function linkRefusal(
  holder: Pick<UserRow, 'role' | 'email_verified' | 'created_via'>,
  policy: LinkPolicy,
  holderHasIdentities: boolean,
): LinkRefusal | null {
  if (!policy.linkByEmail) return 'link_by_email_off';
  if (holder.role === 'admin' && !policy.linkAdmins) return 'admin_account';
  if (holder.email_verified === 1) return null;
  // An unverified account that got its address from another identity may belong to whoever claimed
  // that address first: handing it to this identity too would share it with them.
  if (holderHasIdentities) return 'unverified_with_identity';
  return OPERATOR_VOUCHED.has(holder.created_via) ? null : 'address_not_proven';
}

/** Throws 409 `identity_link_required` unless the rules above let `holder` be linked by e-mail. */
export async function assertMayLinkByEmail(db: Db, holder: UserRow, policy: LinkPolicy): Promise<void> {
  const withIdentity = holder.email_verified !== 1 && (await hasIdentities(db, holder.id));
  const refusal = linkRefusal(holder, policy, withIdentity);
  if (refusal !== null) throw new LinkRefused(refusal);
}
