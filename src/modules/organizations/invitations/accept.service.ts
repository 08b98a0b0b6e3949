import type { AuthContext } from '../../../http/guard.ts';
import { release, reserveOrThrow } from '../../../identity/budgets/attempt-budget.ts';
import {
  type AuditEvent,
  type ClientInfo,
  findUserByEmail,
  insertUser,
  iso,
  newUserRow,
  PASSWORD_LOGIN,
  signIn,
  type TokenResponse,
} from '../../../identity/index.ts';
import { linkBudget } from '../../../identity/links/budgets.ts';
import { checkPasswordPolicy } from '../../../identity/passwords/password-policy.ts';
import { hashOpaqueToken } from '../../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { Db } from '../../../platform/db/schema.ts';
import {
  consumeInvitation,
  findInvitationByTokenHash,
  type InvitationWithOrganization,
} from './invitations.queries.ts';
import type { AcceptBody, Membership, OrgInvitationView } from './invitations.schemas.ts';
import { addInvitedMember, invitationEventData, parseRoles } from './org-access.ts';

// newOpaqueToken: 32 random bytes, base64url without padding. Anything else cannot be ours and is
// answered without touching the database.
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** What an invitation's page shows (no auth; reads only: mail scanners open links too). */
export async function viewOrganizationInvitation(
  ctx: AppContext,
  token: string,
  client: ClientInfo,
): Promise<OrgInvitationView> {
  const invitation = await usableInvitation(ctx, token, client);
  return {
    organization: { id: invitation.organization_id, name: invitation.organization_name },
    email: invitation.email,
    roles: parseRoles(invitation.roles),
    expires_at: iso(invitation.expires_at),
    account_exists: (await findUserByEmail(ctx.db, invitation.email)) !== undefined,
  };
}

/**
 * Accepts an invitation (docs/api.md §21). Signed in (`caller`): the account must hold the invited
 * address (else 403), and becomes a member. Not signed in: `{password, name?}` creates the account
 * — active, its address proven by the link — through the sign-in pipeline, and answers its tokens;
 * an address that already has an account must accept signed in (401). Either way the invitation is
 * used up by one conditional write in the transaction that adds the member: exactly one of
 * concurrent acceptances wins, the others get 410 `invitation_used`.
 */
export async function acceptOrganizationInvitation(
  ctx: AppContext,
  token: string,
  caller: AuthContext | null,
  body: AcceptBody,
  client: ClientInfo,
): Promise<Membership | TokenResponse> {
  const invitation = await usableInvitation(ctx, token, client);
  if (caller !== null) {
    if (caller.user.email !== invitation.email) {
      throw new ApiError('forbidden', {
        detail: 'This invitation is for another address: sign in with the invited account',
      });
    }
    return ctx.db.transaction().execute(async (trx) => {
      await useUp(trx, invitation);
      const joined = await addInvitedMember(trx, invitation, caller.user, client, [
        acceptedEvent(invitation, caller.user.id, client),
      ]);
      return {
        organization: {
          id: invitation.organization_id,
          slug: invitation.organization_slug,
          name: invitation.organization_name,
        },
        user: {
          id: caller.user.id,
          email: caller.user.email,
          name: caller.user.name,
          status: caller.user.status,
        },
        roles: joined.roles,
        joined_at: iso(joined.joinedAt),
      };
    });
  }
  const password = body?.password;
  if (password === undefined) {
    throw new ApiError('unauthenticated', {
      detail: 'Sign in with the invited account, or send {"password"} to create it',
    });
  }
  // Checked before the hash (the expensive work): a known address never gets a second account.
  if ((await findUserByEmail(ctx.db, invitation.email)) !== undefined) throw accountExists();
  // docs/api.md §23 sso_required: a new account at such a domain comes from the connection, not a
  // password (the invitation stays usable; signed in through the connection, it can be accepted).
  await ctx.signIn.checkAddress(ctx.db, { email: invitation.email, user: null });
  const policy = checkPasswordPolicy(password, {
    minLength: ctx.config.passwordMinLength,
    breachedCheck: ctx.config.passwordBreachedCheck,
    email: invitation.email,
  });
  if (!policy.ok) throw new ApiError('weak_password', { detail: policy.reason });
  // Hashing at capacity throws HashCapacityError, which the one error handler answers 503 (http/errors.ts).
  const passwordHash = await ctx.passwords.hash(password);
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      await useUp(trx, invitation);
      const now = Date.now();
      const user = newUserRow(
        {
          created_via: 'invitation',
          email: invitation.email,
          name: body?.name?.trim() ?? '',
          status: 'active',
          password_hash: passwordHash,
          // The link reached this mailbox: the address is proven.
          email_verified: 1,
        },
        now,
      );
      // A sign-up of the same address racing this one: the unique index refuses one (below).
      await insertUser(trx, user);
      const created: AuditEvent = {
        action: 'user.create',
        actor: { type: 'anonymous' },
        target: { type: 'user', id: user.id },
        client,
        details: { via: 'organization_invitation', organization_id: invitation.organization_id },
        subject: user,
      };
      await addInvitedMember(trx, invitation, user, client, [
        created,
        acceptedEvent(invitation, user.id, client),
      ]);
      // One way in: the new account's first session opens through the sign-in pipeline.
      const { tokens } = await signIn(ctx, trx, {
        user,
        client,
        amr: PASSWORD_LOGIN.amr,
        details: { method: 'organization_invitation', invitation_id: invitation.id },
      });
      return tokens;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw accountExists();
    throw err;
  }
}

function acceptedEvent(
  invitation: InvitationWithOrganization,
  userId: string,
  client: ClientInfo,
): AuditEvent {
  return {
    action: 'organization.invitation.accepted',
    actor: { type: 'user', id: userId },
    target: { type: 'organization', id: invitation.organization_id },
    client,
    details: invitationEventData(
      {
        id: invitation.organization_id,
        slug: invitation.organization_slug,
        name: invitation.organization_name,
      },
      { id: invitation.id, email: invitation.email, roles: parseRoles(invitation.roles) },
      // The person who joined: the event's `data.user`.
      userId,
    ),
  };
}

/** Uses the invitation up in the caller's transaction, or says why it cannot be. */
async function useUp(trx: Db, invitation: InvitationWithOrganization): Promise<void> {
  const now = Date.now();
  if (!(await consumeInvitation(trx, invitation.id, now))) {
    throw invitation.expires_at <= now ? expired() : used();
  }
}

/**
 * The pending, unexpired invitation behind a token. The lookup is reserved first on the client
 * address's link budget (docs/api.md §16: every check of a secret reserves its attempt before the
 * work) and given back when the token is one of ours, so only guesses count.
 */
async function usableInvitation(
  ctx: AppContext,
  token: string,
  client: ClientInfo,
): Promise<InvitationWithOrganization> {
  const reservation = await reserveOrThrow(
    ctx.db,
    [linkBudget(client.ip)],
    'Too many link attempts; try again later',
  );
  const invitation = TOKEN_FORMAT.test(token)
    ? await findInvitationByTokenHash(ctx.db, hashOpaqueToken(token))
    : undefined;
  if (!invitation) throw new ApiError('invitation_not_found', { detail: 'No invitation has this token' });
  await release(ctx.db, reservation);
  if (invitation.status !== 'pending') throw used();
  if (invitation.expires_at <= Date.now()) throw expired();
  return invitation;
}

function accountExists(): ApiError {
  return new ApiError('unauthenticated', {
    detail: 'An account with this address exists: sign in, then accept the invitation',
  });
}

function used(): ApiError {
  return new ApiError('invitation_used', { detail: 'This invitation was already used, replaced or revoked' });
}

function expired(): ApiError {
  return new ApiError('invitation_expired', { detail: 'This invitation has expired' });
}
