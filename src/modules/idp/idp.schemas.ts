import { type Static, Type } from '@sinclair/typebox';
import { TokenResponse } from '../../identity/index.ts';

/** `POST /api/v1/idp/verify` body: the provider's ID token and the nonce of the authentication request. */
export const VerifyBody = Type.Object(
  {
    id_token: Type.String({ minLength: 1, maxLength: 16_384 }),
    nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    /**
     * The access token of the same sign-in: when the ID token lacks a claim the mapping needs (an
     * OIDC Core 5.4 provider keeps `email` and `profile` for userinfo), its userinfo is read with it.
     */
    access_token: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
    /** docs/api.md §18: a named provider, only while the `providers` module is on. */
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type VerifyBody = Static<typeof VerifyBody>;

export const VerifyResponse = Type.Object({
  ...TokenResponse.properties,
  created: Type.Boolean(),
});
export type VerifyResponse = Static<typeof VerifyResponse>;

const EnabledConfig = Type.Object({
  enabled: Type.Literal(true),
  issuer: Type.String(),
  client_id: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  end_session_endpoint: Type.Union([Type.String(), Type.Null()]),
  jwks_uri: Type.String(),
  scopes_supported: Type.Array(Type.String()),
});

/** `GET /api/v1/idp/config`: the provider's endpoints, or `{"enabled": false}`. */
export const ConfigResponse = Type.Union([EnabledConfig, Type.Object({ enabled: Type.Literal(false) })]);
export type ConfigResponse = Static<typeof ConfigResponse>;
