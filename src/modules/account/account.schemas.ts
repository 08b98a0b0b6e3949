import { Type } from '@sinclair/typebox';
import { UserSchema } from '../../identity/index.ts';
import { MfaStatus } from '../mfa/index.ts';

/**
 * `current_password` is capped like login's password (nothing longer can be correct); `new_password`
 * is not capped here, so a too-long one reaches the policy and gets its 422 (docs/api.md §5) — the 64 KiB
 * body limit bounds it, and the policy stops counting at 257 characters.
 */
export const ChangePasswordBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 256 }),
    new_password: Type.String(),
  },
  { additionalProperties: false },
);

export const ProfileResponse = Type.Object(
  {
    ...UserSchema.properties,
    identities: Type.Array(
      Type.Object(
        {
          issuer: Type.String(),
          subject: Type.String(),
          linked_at: Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false },
      ),
    ),
    sessions: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          created_at: Type.String({ format: 'date-time' }),
          last_used_at: Type.String({ format: 'date-time' }),
          current: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    // While the `mfa` module is on: what GET /api/v1/mfa shows (docs/api.md §13, "the profile shows what the user has").
    mfa: Type.Optional(MfaStatus),
  },
  { additionalProperties: false },
);
