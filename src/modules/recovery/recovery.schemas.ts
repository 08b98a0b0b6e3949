import { type Static, Type } from '@sinclair/typebox';
import { PasskeyProof, UserSchema } from '../../identity/index.ts';

/** Long enough for any address normalizeEmail accepts (which then decides). */
export const EmailInput = Type.String({ minLength: 1, maxLength: 320 });
export type EmailInput = Static<typeof EmailInput>;
/** The policy decides length (an over-long password is a 422); the cap only bounds the work. */
export const PasswordInput = Type.String({ maxLength: 4096 });
export type PasswordInput = Static<typeof PasswordInput>;

/** A link token as a path parameter (its format is checked by the links library). */
export const LinkTokenParams = Type.Object({ token: Type.String({ maxLength: 512 }) });
export type LinkTokenParams = Static<typeof LinkTokenParams>;

/** A bodiless POST: no body, `{}` or `null` (docs/api.md §11). */
export const EmptyBody = Type.Union([Type.Object({}, { additionalProperties: false }), Type.Null()]);
export type EmptyBody = Static<typeof EmptyBody>;

export const MessageResponse = Type.Object({ message: Type.String() }, { additionalProperties: false });
export type MessageResponse = Static<typeof MessageResponse>;

export const ForgotBody = Type.Object({ email: EmailInput }, { additionalProperties: false });
export type ForgotBody = Static<typeof ForgotBody>;

export const ResetView = Type.Object(
  {
    email: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
    mfa_required: Type.Boolean(),
    // What the reset will ask for (docs/api.md §13 `methods`); empty when `mfa_required` is false.
    methods: Type.Array(
      Type.Union([Type.Literal('totp'), Type.Literal('recovery_code'), Type.Literal('passkey')]),
    ),
  },
  { additionalProperties: false },
);
export type ResetView = Static<typeof ResetView>;

export const ResetBody = Type.Object(
  {
    password: PasswordInput,
    // A TOTP or recovery code (docs/api.md §11); only asked for when the user has a second factor.
    mfa_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    // Instead of mfa_code: an assertion on options asked with `reset_token` (docs/api.md §11).
    passkey: Type.Optional(PasskeyProof),
  },
  { additionalProperties: false },
);
export type ResetBody = Static<typeof ResetBody>;

export const UserEnvelope = Type.Object({ user: UserSchema }, { additionalProperties: false });
export type UserEnvelope = Static<typeof UserEnvelope>;

export const ExpiresResponse = Type.Object(
  { expires_at: Type.String({ format: 'date-time' }) },
  { additionalProperties: false },
);
export type ExpiresResponse = Static<typeof ExpiresResponse>;
