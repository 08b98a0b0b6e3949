import { type Static, Type } from '@sinclair/typebox';
import { UserSchema } from '../../identity/index.ts';

/** Names are free text without control characters (they travel in logs and events). */
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const Uuid = Type.String({ minLength: 1, maxLength: 64 });

const Owner = Type.Object(
  { type: Type.Union([Type.Literal('user'), Type.Literal('organization')]), id: Type.String() },
  { additionalProperties: false },
);

export const RateLimit = Type.Object(
  {
    requests: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    window_s: Type.Integer({ minimum: 1, maximum: 86_400 }),
  },
  { additionalProperties: false },
);
export type RateLimit = Static<typeof RateLimit>;

/** The key object of docs/api.md §22 (never the secret, never its hash). */
export const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    owner: Owner,
    scopes: Type.Union([Type.Array(Type.String()), Type.Null()]),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    rate_limit: Type.Union([RateLimit, Type.Null()]),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    created_by: Type.Object({ id: Type.String() }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);
export type PublicApiKey = Static<typeof ApiKeySchema>;

/** The create answer: the key object plus the secret, shown this once. */
export const ApiKeyWithSecret = Type.Object(
  { ...ApiKeySchema.properties, key: Type.String() },
  { additionalProperties: false },
);
export type ApiKeyWithSecret = Static<typeof ApiKeyWithSecret>;

export const CreateKeyBody = Type.Object(
  {
    name: Name,
    // Checked against the enabled modules' groups by the service (docs/api.md §22).
    scopes: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100 }), Type.Null()]),
    ),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    rate_limit: Type.Optional(Type.Union([RateLimit, Type.Null()])),
    organization_id: Type.Optional(Uuid),
    user_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

export const KeyParams = Type.Object({ id: Type.String({ maxLength: 512 }) });
export type KeyParams = Static<typeof KeyParams>;

export const ListKeysQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    owner: Type.Optional(Type.String({ pattern: '^(user|organization):[^\\s]{1,64}$' })),
  },
  { additionalProperties: false },
);
export type ListKeysQuery = Static<typeof ListKeysQuery>;

export const KeyPage = Type.Object({
  data: Type.Array(ApiKeySchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type KeyPage = Static<typeof KeyPage>;

export const ServiceAccountBody = Type.Object(
  {
    name: Name,
    role: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('user')])),
    // Organization roles (docs/api.md §21) once the organizations module is present.
    roles: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);
export type ServiceAccountBody = Static<typeof ServiceAccountBody>;

export const VerifyBody = Type.Object(
  { key: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export type VerifyBody = Static<typeof VerifyBody>;

/** An organization object without `metadata` (docs/api.md §21, §22), as the verify answer names an owner. */
const OrganizationOwner = Type.Object({ id: Type.String() }, { additionalProperties: true });

export const VerifyResponse = Type.Union([
  Type.Object(
    {
      valid: Type.Literal(true),
      key: ApiKeySchema,
      owner: Type.Union([UserSchema, OrganizationOwner]),
      scopes: Type.Union([Type.Array(Type.String()), Type.Null()]),
      roles: Type.Array(Type.String()),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      valid: Type.Literal(false),
      reason: Type.Union([
        Type.Literal('invalid'),
        Type.Literal('expired'),
        Type.Literal('revoked'),
        Type.Literal('owner_disabled'),
        Type.Literal('rate_limited'),
      ]),
      retry_after_s: Type.Optional(Type.Integer({ minimum: 1 })),
    },
    { additionalProperties: false },
  ),
]);
export type VerifyResponse = Static<typeof VerifyResponse>;
