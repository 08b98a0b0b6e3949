import {
  activateInvitedUser,
  type ClientInfo,
  findUserById,
  insertUser,
  iso,
  localeOr400,
  newUserRow,
  normalizeEmail,
  PASSWORD_LOGIN,
  recordAudit,
  signIn,
  type TokenResponse,
  toPublicUser,
  updateUser,
} from '../../identity/index.ts';
import { issueLink, linkUrl, useLink } from '../../identity/links/one-time-links.ts';
import { checkPasswordPolicy } from '../../identity/passwords/password-policy.ts';
import { HashCapacityError } from '../../identity/passwords/passwords.ts';
import { hashOpaqueToken } from '../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { renderInvitationMailIn } from '../../platform/mail/invitation-mail.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';
import {
  findInvitationByTokenHash,
  findUserByEmailForUpdate,
  type InvitationWithUsers,
  insertInvitation,
} from './invitations.queries.ts';
import type { InvitationView, InviteBody, InviteResponse } from './invitations.schemas.ts';

// newOpaqueToken: 32 random bytes, base64url without padding. Anything else cannot be ours and is
// answered without touching the database.
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Invites an address (docs/api.md §6): creates the user as `invited` — or reuses an invited one, whose
 * pending invitation is replaced — and writes the invitation and its mail in one transaction. The
 * token is a one-time link of purpose `invitation` (src/identity/links/one-time-links.ts: issuing it
 * replaces the user's live one); the invitations row adds its role and inviter.
 */
export async function inviteUser(
  ctx: AppContext,
  inviter: UserRow,
  input: InviteBody,
  client: ClientInfo,
): Promise<InviteResponse> {
  const email = normalizeEmail(input.email);
  if (email === null) {
    throw new ApiError('validation_failed', {
      detail: 'body/email must be a valid email address',
      errors: [{ path: '/email', message: 'must be a valid email address' }],
    });
  }
  const name = input.name?.trim();
  const role = input.role ?? 'user';
  const locale = input.locale === undefined ? undefined : localeOr400(input.locale);

  const attempt = () =>
    ctx.db.transaction().execute(async (trx) => {
      const now = Date.now();
      const existing = await findUserByEmailForUpdate(trx, email);
      let user: UserRow;
      if (existing) {
        if (existing.status !== 'invited') {
          throw new ApiError('email_taken', { detail: 'A user with this email already exists' });
        }
        // An older invitation mail still waiting (SMTP down) would only deliver a dead link.
        await ctx.mail.outbox.withdraw(trx, email, 'invitation');
        const patch = {
          role,
          updated_at: now,
          ...(name !== undefined ? { name } : {}),
          ...(locale !== undefined ? { locale } : {}),
        };
        await updateUser(trx, existing.id, patch);
        user = { ...existing, ...patch };
      } else {
        user = newUserRow(
          {
            created_via: 'invitation',
            email,
            name: name ?? '',
            role,
            status: 'invited',
            locale: locale ?? null,
          },
          now,
        );
        await insertUser(trx, user);
      }
      const { token, link, replaced } = await issueLink(trx, {
        userId: user.id,
        purpose: 'invitation',
        email,
        ttlS: ctx.config.invitationTtlS,
        now,
      });
      await insertInvitation(trx, { id: link.id, role, invited_by: inviter.id });
      const url = linkUrl(ctx.config.inviteUrlTemplate, token);
      const mail = renderInvitationMailIn(
        {
          to: email,
          inviterName: inviter.name.trim() || null,
          inviteUrl: url,
          expiresAt: new Date(link.expires_at),
          // APP_NAME names the product in the mail, as in the resend (invitation-resend.ts).
          productName: ctx.config.appName,
        },
        // The invitee's locale, else the inviting request's language (API §24).
        mailLanguage(ctx.languages, user.locale, client.language),
      );
      await ctx.mail.outbox.enqueue(trx, mail, 'invitation');
      await recordAudit(trx, {
        action: 'invitation.send',
        actor: { type: 'user', id: inviter.id },
        target: { type: 'invitation', id: link.id },
        client,
        details: { user_id: user.id, email, role, replaced: replaced > 0 },
      });
      return { user, link, url };
    });

  let result: Awaited<ReturnType<typeof attempt>>;
  try {
    result = await attempt();
  } catch (err) {
    // Two first invitations of one new address raced and the other inserted the user: run again,
    // now on the existing-user path (it replaces the other's invitation, like any re-invite).
    if (!isUniqueViolation(err)) throw err;
    result = await attempt();
  }
  ctx.mail.outbox.nudge();
  const { user, link, url } = result;
  return {
    invitation: {
      id: link.id,
      email: link.email,
      role,
      expires_at: iso(link.expires_at),
      invite_url: url,
    },
    user: toPublicUser(user),
  };
}

/** What an invitation link shows (docs/api.md §6). Reads only: mail scanners open links too. */
export async function viewInvitation(ctx: AppContext, token: string): Promise<InvitationView> {
  const invitation = await usableInvitation(ctx, token);
  const inviter = invitation.inviter_name?.trim();
  return {
    email: invitation.email,
    name: invitation.user_name,
    role: invitation.role,
    expires_at: iso(invitation.expires_at),
    invited_by: inviter ? { name: inviter } : null,
  };
}

/**
 * Accepts an invitation: checks the password policy (a weak password leaves the invitation
 * usable), then in one transaction consumes the invitation (exactly one of concurrent accepts
 * wins), activates the user with the password and opens a session.
 */
export async function acceptInvitation(
  ctx: AppContext,
  token: string,
  password: string,
  client: ClientInfo,
): Promise<TokenResponse> {
  const invitation = await usableInvitation(ctx, token);
  // docs/api.md §23 sso_required: before anything is hashed or consumed (the invitation stays usable).
  const invited = await findUserById(ctx.db, invitation.user_id);
  await ctx.signIn.checkAddress(ctx.db, { email: invitation.email, user: invited ?? null });
  const policy = checkPasswordPolicy(password, {
    minLength: ctx.config.passwordMinLength,
    breachedCheck: ctx.config.passwordBreachedCheck,
    email: invitation.email,
  });
  if (!policy.ok) throw new ApiError('weak_password', { detail: policy.reason });
  let passwordHash: string;
  try {
    passwordHash = await ctx.passwords.hash(password);
  } catch (err) {
    if (err instanceof HashCapacityError) {
      throw new ApiError('unavailable', { detail: err.message, retryAfterS: err.retryAfterS });
    }
    throw err;
  }
  return ctx.db.transaction().execute(async (trx) => {
    const now = Date.now();
    if (!(await useLink(trx, invitation, now))) {
      throw invitation.expires_at <= now ? expired() : used();
    }
    if (!(await activateInvitedUser(trx, invitation.user_id, passwordHash, now))) throw used();
    const user = await findUserById(trx, invitation.user_id);
    if (!user) throw used();
    // The acceptance entry covers the session it opens: no separate login.success, no login counted.
    const { tokens } = await signIn(ctx, trx, {
      user,
      client,
      amr: PASSWORD_LOGIN.amr,
      details: { method: 'invitation' },
      opening: { invitation: { id: invitation.id } },
    });
    return tokens;
  });
}

async function usableInvitation(ctx: AppContext, token: string): Promise<InvitationWithUsers> {
  const invitation = TOKEN_FORMAT.test(token)
    ? await findInvitationByTokenHash(ctx.db, hashOpaqueToken(token))
    : undefined;
  if (!invitation) throw new ApiError('invitation_not_found', { detail: 'No invitation has this token' });
  // A user no longer `invited` (activated or disabled by an admin meanwhile) cannot be taken over
  // through an old link, whatever the invitation row says.
  if (
    invitation.used_at !== null ||
    invitation.replaced_at !== null ||
    invitation.user_status !== 'invited'
  ) {
    throw used();
  }
  if (invitation.expires_at <= Date.now()) throw expired();
  return invitation;
}

function used(): ApiError {
  return new ApiError('invitation_used', { detail: 'This invitation was already used or replaced' });
}

function expired(): ApiError {
  return new ApiError('invitation_expired', { detail: 'This invitation has expired' });
}
