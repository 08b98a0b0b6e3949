import { type Static, Type } from '@sinclair/typebox';
import { Code, PasskeyProof } from '../../identity/factors/proof.schemas.ts';

export const CodeBody = Type.Object({ code: Code }, { additionalProperties: false });
export type CodeBody = Static<typeof CodeBody>;

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
