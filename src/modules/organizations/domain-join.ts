import { recordAudits, type SessionOpened } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { Db } from '../../platform/db/schema.ts';
import { joinableByDomain } from './domain-join.queries.ts';
import { insertMember } from './members.queries.ts';
import { lockOrganization } from './organizations.queries.ts';
import { parseNames } from './reads.ts';
import { existingRoleNames } from './roles.queries.ts';

/**
 * docs/api.md §21, "Joining by domain": at a sign-in by any method, an active account whose
 * address is verified and at a domain of an organization with `join_by_domain` becomes a member
 * with its `default_roles` (those still in the catalogue) — unless it left or was removed before.
 * Registered on the sign-in pipeline's one extension point (ctx.signIn) by the module's start.
 */
export function joinByDomainListener(ctx: AppContext) {
  return async (trx: Db, { user }: SessionOpened): Promise<void> => {
    if (!ctx.modules.isEnabled('organizations')) return;
    if (user.status !== 'active' || user.email_verified !== 1) return;
    const at = user.email.lastIndexOf('@');
    if (at < 0) return;
    const domain = user.email.slice(at + 1).toLowerCase();
    const org = await joinableByDomain(trx, domain, user.id);
    if (!org) return;
    // Under the organization's row lock, look again: a concurrent sign-in may have added them.
    await lockOrganization(trx, org.id);
    if (!(await joinableByDomain(trx, domain, user.id))) return;
    const wanted = parseNames(org.default_roles);
    const known = await existingRoleNames(trx, wanted);
    const roles = wanted.filter((r) => known.has(r)).sort();
    await insertMember(trx, org.id, user.id, roles, Date.now());
    await recordAudits(trx, [
      {
        action: 'organization.member.added',
        actor: { type: 'user', id: user.id },
        target: { type: 'organization', id: org.id },
        details: {
          organization: { id: org.id, slug: org.slug, name: org.name },
          user_id: user.id,
          roles,
          via: 'domain',
        },
      },
    ]);
  };
}
