import { type Static, Type } from '@sinclair/typebox';

// The proofs a sign-in or a sensitive change carries (docs/api.md §13, §16): shared by every feature
// that asks for one.

export const Code = Type.String({ minLength: 1, maxLength: 64 });
export const Password = Type.String({ minLength: 1, maxLength: 256 });

export const CurrentPasswordBody = Type.Object(
  { current_password: Password },
  { additionalProperties: false },
);
export type CurrentPasswordBody = Static<typeof CurrentPasswordBody>;

/** A WebAuthn response JSON (validated by @simplewebauthn/server; only its outer shape here). */
export const WebauthnResponse = Type.Object({}, { additionalProperties: true, maxProperties: 16 });
export type WebauthnResponse = Static<typeof WebauthnResponse>;
export const PasskeyProof = Type.Object(
  { challenge_id: Type.String({ minLength: 1, maxLength: 64 }), response: WebauthnResponse },
  { additionalProperties: false },
);
export type PasskeyProof = Static<typeof PasskeyProof>;

/**
 * A fresh proof (docs/api.md §16): one of the current password, a TOTP or recovery code, or a passkey
 * assertion. Every field is optional here so that a body without a proof (or no body) reaches the
 * service and answers 401 `reauthentication_required` rather than a 400.
 */
export const FreshProofFields = {
  current_password: Type.Optional(Password),
  code: Type.Optional(Code),
  passkey: Type.Optional(PasskeyProof),
};
export const FreshProofBody = Type.Union([
  Type.Object(FreshProofFields, { additionalProperties: false }),
  Type.Null(),
]);
export type FreshProofBody = Static<typeof FreshProofBody>;
