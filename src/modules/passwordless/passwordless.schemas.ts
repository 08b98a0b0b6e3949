import { Type } from '@sinclair/typebox';

/** Long enough for any address normalizeEmail accepts (which then decides). */
const EmailInput = Type.String({ minLength: 1, maxLength: 320 });

export const EmailSignInRequestBody = Type.Object({ email: EmailInput }, { additionalProperties: false });

/**
 * `{"email","code"}` or `{"token"}` (docs/api.md §20). The code's shape is judged after the throttle
 * (a typo counts as a wrong code); the cap only bounds the work. A token's format is checked by the
 * links library.
 */
export const EmailSignInVerifyBody = Type.Union([
  Type.Object(
    { email: EmailInput, code: Type.String({ minLength: 1, maxLength: 32 }) },
    { additionalProperties: false },
  ),
  Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false }),
]);

export const EmailSignInAccepted = Type.Object({ message: Type.String() }, { additionalProperties: false });
