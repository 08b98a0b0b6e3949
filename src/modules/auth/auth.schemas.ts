import { Type } from '@sinclair/typebox';
import { UserSchema } from '../users/users.schemas.ts';

export const ClaimsSchema = Type.Object({
  iss: Type.String(),
  sub: Type.String(),
  aud: Type.String(),
  sid: Type.String(),
  role: Type.String(),
  iat: Type.Integer(),
  exp: Type.Integer(),
  jti: Type.String(),
});

export const VerifyTokenResponse = Type.Object({
  valid: Type.Literal(true),
  user: UserSchema,
  session_id: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
  claims: ClaimsSchema,
});

export const JwksResponse = Type.Object({
  keys: Type.Array(Type.Object({}, { additionalProperties: true })),
});

/** The token response of API.md §5 (login, refresh, invitation set-password, idp verify). */
export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  refresh_expires_in: Type.Integer(),
  user: UserSchema,
});
