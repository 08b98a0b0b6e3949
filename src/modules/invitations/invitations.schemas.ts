import { type Static, Type } from '@sinclair/typebox';
import { LocaleInput, TokenResponse, UserSchema } from '../../identity/index.ts';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('user')]);

/** `POST /api/v1/users/invite` body. */
export const InviteBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    role: Type.Optional(Role),
    locale: Type.Optional(LocaleInput),
  },
  { additionalProperties: false },
);
export type InviteBody = Static<typeof InviteBody>;

/** `POST /api/v1/users/invite` 201 response. */
export const InviteResponse = Type.Object(
  {
    invitation: Type.Object(
      {
        id: Type.String({ format: 'uuid' }),
        email: Type.String(),
        role: Role,
        expires_at: Type.String({ format: 'date-time' }),
        invite_url: Type.String(),
      },
      { additionalProperties: false },
    ),
    user: UserSchema,
  },
  { additionalProperties: false },
);
export type InviteResponse = Static<typeof InviteResponse>;

/** The token of an invitation link, as a path parameter (its format is checked by the service). */
export const TokenParams = Type.Object({ token: Type.String({ maxLength: 512 }) });
export type TokenParams = Static<typeof TokenParams>;

/** `GET /api/v1/invite/<token>` 200 response. */
export const InvitationView = Type.Object(
  {
    email: Type.String(),
    name: Type.String(),
    role: Role,
    expires_at: Type.String({ format: 'date-time' }),
    invited_by: Type.Union([
      Type.Object({ name: Type.String() }, { additionalProperties: false }),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);
export type InvitationView = Static<typeof InvitationView>;

/** `POST /api/v1/invite/<token>/set-password` body. */
export const SetPasswordBody = Type.Object(
  // The policy (length 15..256 code points) is checked by the service so that a too-long
  // password gets 422 weak_password, not 400; the cap here only bounds the work.
  { password: Type.String({ maxLength: 4096 }) },
  { additionalProperties: false },
);
export type SetPasswordBody = Static<typeof SetPasswordBody>;

export { TokenResponse };
