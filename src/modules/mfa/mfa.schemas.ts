import { type Static, Type } from '@sinclair/typebox';
import { PasskeyProof, WebauthnResponse } from '../passkeys/index.ts';

// The passkey's proof is the passkeys module's (its factor check takes it); mfa's bodies embed it.
export { PasskeyProof, WebauthnResponse };

const Code = Type.String({ minLength: 1, maxLength: 64 });
const Password = Type.String({ minLength: 1, maxLength: 256 });

export const CodeBody = Type.Object({ code: Code }, { additionalProperties: false });
export type CodeBody = Static<typeof CodeBody>;
export const CurrentPasswordBody = Type.Object(
  { current_password: Password },
  { additionalProperties: false },
);
export type CurrentPasswordBody = Static<typeof CurrentPasswordBody>;

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

export const LoginMfaBody = Type.Union([
  Type.Object(
    { mfa_token: Type.String({ minLength: 1, maxLength: 128 }), code: Code },
    { additionalProperties: false },
  ),
  Type.Object(
    { mfa_token: Type.String({ minLength: 1, maxLength: 128 }), passkey: PasskeyProof },
    { additionalProperties: false },
  ),
]);
export type LoginMfaBody = Static<typeof LoginMfaBody>;

export const MfaStatus = Type.Object({
  totp: Type.Object({ enabled: Type.Boolean(), created_at: Type.Union([Type.String(), Type.Null()]) }),
  recovery_codes_remaining: Type.Integer(),
  passkeys: Type.Integer(),
});
export type MfaStatus = Static<typeof MfaStatus>;

export const TotpEnrollment = Type.Object({
  secret: Type.String(),
  otpauth_url: Type.String(),
  qr_svg: Type.String(),
});
export type TotpEnrollment = Static<typeof TotpEnrollment>;
export const RecoveryCodes = Type.Object({ recovery_codes: Type.Array(Type.String()) });
export type RecoveryCodes = Static<typeof RecoveryCodes>;
export const MaybeRecoveryCodes = Type.Object({ recovery_codes: Type.Optional(Type.Array(Type.String())) });
export type MaybeRecoveryCodes = Static<typeof MaybeRecoveryCodes>;
