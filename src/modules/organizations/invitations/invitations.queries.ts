import type { Selectable } from 'kysely';
import type { Db, OrganizationInvitationsTable } from '../../../platform/db/schema.ts';

/** An invitation to an organization as stored: only its token's hash. */
export type OrgInvitationRow = Selectable<OrganizationInvitationsTable>;

/** A pending invitation of the list, with its inviter's name. */
export interface PendingInvitation {
  id: string;
  email: string;
  roles: string;
  expires_at: number;
  created_at: number;
  created_by: string | null;
  inviter_name: string | null;
}

/** An invitation behind a token, with its organization's name and slug (any state: the caller decides). */
export interface InvitationWithOrganization extends OrgInvitationRow {
  organization_name: string;
  organization_slug: string;
}

/** Writes a new invitation. */
export async function insertOrgInvitation(db: Db, row: OrgInvitationRow): Promise<void> {
  await db.insertInto('organization_invitations').values(row).execute();
}

/**
 * Marks the organization's pending invitations of an address `replaced` (a new one takes their
 * place: the old token answers 410 `invitation_used`); returns how many.
 */
export async function replacePendingInvitations(
  db: Db,
  organizationId: string,
  email: string,
): Promise<number> {
  const result = await db
    .updateTable('organization_invitations')
    .set({ status: 'replaced' })
    .where('organization_id', '=', organizationId)
    .where('email', '=', email)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The organization's pending, unexpired invitations, newest first. */
export function listPendingInvitations(
  db: Db,
  organizationId: string,
  now: number,
): Promise<PendingInvitation[]> {
  return db
    .selectFrom('organization_invitations as i')
    .leftJoin('users as u', 'u.id', 'i.created_by')
    .select([
      'i.id',
      'i.email',
      'i.roles',
      'i.expires_at',
      'i.created_at',
      'i.created_by',
      'u.name as inviter_name',
    ])
    .where('i.organization_id', '=', organizationId)
    .where('i.status', '=', 'pending')
    .where('i.expires_at', '>', now)
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .execute();
}

/**
 * Revokes one pending invitation of an organization (the organization named too: an id of another
 * organization's invitation matches nothing). True when it was pending.
 */
export async function revokeInvitation(
  db: Db,
  organizationId: string,
  invitationId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('organization_invitations')
    .set({ status: 'revoked' })
    .where('id', '=', invitationId)
    .where('organization_id', '=', organizationId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The invitation whose token hashes to `tokenHash`, with its organization. */
export function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<InvitationWithOrganization | undefined> {
  return db
    .selectFrom('organization_invitations as i')
    .innerJoin('organizations as o', 'o.id', 'i.organization_id')
    .selectAll('i')
    .select(['o.name as organization_name', 'o.slug as organization_slug'])
    .where('i.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * Uses an invitation up: one conditional write, so exactly one of concurrent acceptances wins
 * (docs/api.md §21: single use, atomic). False when it is no longer pending or has expired.
 */
export async function consumeInvitation(db: Db, invitationId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('organization_invitations')
    .set({ status: 'accepted', used_at: now })
    .where('id', '=', invitationId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
