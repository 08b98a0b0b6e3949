import { type Static, Type } from '@sinclair/typebox';
import { TokenResponse, UserSchema } from '../../identity/index.ts';

export { TokenResponse };

/**
 * Every claim of a Gatehouse access token (docs/api.md §14); the optional ones are missing only from
 * older tokens. Claims the claims hook added (docs/claims-hook.md) are shown too: they were signed.
 */
export const ClaimsSchema = Type.Object(
  {
    iss: Type.String(),
    sub: Type.String(),
    aud: Type.String(),
    exp: Type.Integer(),
    iat: Type.Integer(),
    jti: Type.String(),
    client_id: Type.Optional(Type.String()),
    auth_time: Type.Optional(Type.Integer()),
    sid: Type.String(),
    role: Type.String(),
    amr: Type.Optional(Type.Array(Type.String())),
    email: Type.Optional(Type.String()),
    email_verified: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type ClaimsSchema = Static<typeof ClaimsSchema>;

export const VerifyTokenResponse = Type.Object({
  valid: Type.Literal(true),
  user: UserSchema,
  session_id: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
  claims: ClaimsSchema,
});
export type VerifyTokenResponse = Static<typeof VerifyTokenResponse>;

export const JwksResponse = Type.Object({
  keys: Type.Array(Type.Object({}, { additionalProperties: true })),
});
export type JwksResponse = Static<typeof JwksResponse>;

/**
 * Passwords longer than the policy's 256 allow (docs/api.md §5) cannot be anyone's password, so they are
 * refused as malformed (400) before any throttle lookup or hashing.
 */
export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
    /** Only for a generated password (403 `password_change_required`): its replacement (docs/auth.md). */
    new_password: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const RefreshBody = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);
export type RefreshBody = Static<typeof RefreshBody>;

/** Logout's body is optional: an absent body reaches the validator as null. */
export const LogoutBody = Type.Union([
  Type.Object(
    { scope: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('global')])) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type LogoutBody = Static<typeof LogoutBody>;
