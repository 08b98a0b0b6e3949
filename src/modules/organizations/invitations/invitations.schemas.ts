import { type Static, Type } from '@sinclair/typebox';
import { TokenResponse } from '../../../identity/index.ts';

/** A role name as §21 writes it (the catalogue decides whether it exists). */
const RoleName = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,62}$' });

/** `<id>` of an organization (its format is checked by the service: a malformed id is 404). */
export const OrgParams = Type.Object({ id: Type.String({ maxLength: 512 }) });
export type OrgParams = Static<typeof OrgParams>;

/** `<id>` and `<invitation_id>`. */
export const OrgInvitationParams = Type.Object({
  id: Type.String({ maxLength: 512 }),
  invitation_id: Type.String({ maxLength: 512 }),
});
export type OrgInvitationParams = Static<typeof OrgInvitationParams>;

/** The token of an organization invitation (its format is checked by the service: 404). */
export const InvitationTokenParams = Type.Object({ token: Type.String({ maxLength: 512 }) });
export type InvitationTokenParams = Static<typeof InvitationTokenParams>;

/** `POST /api/v1/organizations/<id>/invitations` body. */
export const OrgInviteBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    roles: Type.Array(RoleName, { maxItems: 50, uniqueItems: true }),
  },
  { additionalProperties: false },
);
export type OrgInviteBody = Static<typeof OrgInviteBody>;

const invitationFields = {
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  roles: Type.Array(Type.String()),
  expires_at: Type.String({ format: 'date-time' }),
};

/** 201 of the invite: `invite_url` only for an admin (a manager's invitation goes only by mail). */
export const OrgInviteResponse = Type.Object(
  { ...invitationFields, invite_url: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export type OrgInviteResponse = Static<typeof OrgInviteResponse>;

/** The pending invitations of an organization: never a token or a URL. */
export const OrgInvitationList = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          ...invitationFields,
          created_at: Type.String({ format: 'date-time' }),
          invited_by: Type.Union([
            Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }),
            Type.Null(),
          ]),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type OrgInvitationList = Static<typeof OrgInvitationList>;

/** `GET /api/v1/organization-invitations/<token>` (no auth). */
export const OrgInvitationView = Type.Object(
  {
    organization: Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }),
    email: Type.String(),
    roles: Type.Array(Type.String()),
    expires_at: Type.String({ format: 'date-time' }),
    account_exists: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type OrgInvitationView = Static<typeof OrgInvitationView>;

/**
 * `POST …/accept` body: nothing (or `{}`) with a Bearer token of the invited account; `{"password",
 * "name"?}` to create the account. The password policy is the service's (422 `weak_password`).
 */
export const AcceptBody = Type.Union([
  Type.Object(
    {
      password: Type.Optional(Type.String({ maxLength: 4096 })),
      name: Type.Optional(Type.String({ maxLength: 200 })),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type AcceptBody = Static<typeof AcceptBody>;

/** What a signed-in acceptance answers: the membership it made. */
export const Membership = Type.Object(
  {
    organization: Type.Object(
      { id: Type.String(), slug: Type.String(), name: Type.String() },
      { additionalProperties: false },
    ),
    user: Type.Object(
      { id: Type.String(), email: Type.String(), name: Type.String(), status: Type.String() },
      { additionalProperties: false },
    ),
    roles: Type.Array(Type.String()),
    joined_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type Membership = Static<typeof Membership>;

/** The accept's 200: the membership (signed in) or a token response (the account it created). */
export const AcceptResponse = Type.Union([Membership, TokenResponse]);
export type AcceptResponse = Static<typeof AcceptResponse>;
