import { type Static, Type } from '@sinclair/typebox';
import { PasskeyProof, WebauthnResponse } from './passkey-proof.schemas.ts';

export { PasskeyProof };

export const PasskeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  backed_up: Type.Boolean(),
  device_type: Type.String(),
});
export type PasskeySchema = Static<typeof PasskeySchema>;

export const CreatedPasskey = Type.Object({
  ...PasskeySchema.properties,
  recovery_codes: Type.Optional(Type.Array(Type.String())),
});
export type CreatedPasskey = Static<typeof CreatedPasskey>;

export const PasskeyList = Type.Object({ data: Type.Array(PasskeySchema) });
export type PasskeyList = Static<typeof PasskeyList>;

export const CreatePasskeyBody = Type.Object(
  {
    challenge_id: Type.String({ minLength: 1, maxLength: 64 }),
    response: WebauthnResponse,
    name: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type CreatePasskeyBody = Static<typeof CreatePasskeyBody>;

/** Options JSON of a ceremony (PublicKeyCredential*OptionsJSON), passed through as built. */
export const CeremonyOptions = Type.Object({
  challenge_id: Type.String(),
  options: Type.Object({}, { additionalProperties: true }),
});
export type CeremonyOptions = Static<typeof CeremonyOptions>;

export const AuthenticationOptionsBody = Type.Union([
  Type.Object(
    {
      mfa_token: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      // A password reset link's token (docs/api.md §11): the passkey is the reset's second factor.
      reset_token: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type AuthenticationOptionsBody = Static<typeof AuthenticationOptionsBody>;

export const PasskeyIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export type PasskeyIdParams = Static<typeof PasskeyIdParams>;
