import { type Static, Type } from '@sinclair/typebox';
import { FreshProofFields } from '../../identity/index.ts';
import { EmailInput, PasswordInput } from '../recovery/index.ts';

export { EmptyBody, LinkTokenParams, MessageResponse, UserEnvelope } from '../recovery/index.ts';

/**
 * POST /email/verification: no body (or `{}`) with a Bearer token; `{"email","password"}` without
 * one while REQUIRE_VERIFIED_EMAIL is on (docs/api.md §12).
 */
export const VerificationBody = Type.Union([
  Type.Object({ email: EmailInput, password: PasswordInput }, { additionalProperties: false }),
  Type.Object({}, { additionalProperties: false }),
  Type.Null(),
]);
export type VerificationBody = Static<typeof VerificationBody>;

export const EmailLinkView = Type.Object(
  {
    email: Type.String(),
    purpose: Type.Union([Type.Literal('verify'), Type.Literal('change')]),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type EmailLinkView = Static<typeof EmailLinkView>;

/**
 * POST /email/change: the new address and a fresh proof (docs/api.md §16: `current_password`,
 * `code` or `passkey`); without one, 401 `reauthentication_required` from the service. The password
 * keeps this endpoint's wider length limit (a long wrong one is a 401, as before).
 */
export const ChangeBody = Type.Object(
  { new_email: EmailInput, ...FreshProofFields, current_password: Type.Optional(PasswordInput) },
  { additionalProperties: false },
);
export type ChangeBody = Static<typeof ChangeBody>;
