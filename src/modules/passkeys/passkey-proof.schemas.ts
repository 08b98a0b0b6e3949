import { type Static, Type } from '@sinclair/typebox';

/** A WebAuthn response JSON (validated by @simplewebauthn/server; only its outer shape here). */
export const WebauthnResponse = Type.Object({}, { additionalProperties: true, maxProperties: 16 });
export type WebauthnResponse = Static<typeof WebauthnResponse>;
/** A passkey's answer to one challenge: a sign-in, a fresh proof, a factor reset. */
export const PasskeyProof = Type.Object(
  { challenge_id: Type.String({ minLength: 1, maxLength: 64 }), response: WebauthnResponse },
  { additionalProperties: false },
);
export type PasskeyProof = Static<typeof PasskeyProof>;
