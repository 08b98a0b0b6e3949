import { type Static, Type } from '@sinclair/typebox';
import { LocaleInput, UserSchema } from '../../identity/index.ts';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('user')]);
const Status = Type.Union([Type.Literal('active'), Type.Literal('invited'), Type.Literal('disabled')]);
/** Names are free text without control characters (they travel in mail headers and logs). */
const Name = Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
/** Long enough for any address normalizeEmail accepts (which then decides); shorter would be a 400 anyway. */
const EmailInput = Type.String({ minLength: 1, maxLength: 320 });
/** The policy (docs/api.md §5) decides length: an over-long password is a 422, not a schema error. */
const PasswordInput = Type.String({ maxLength: 4096 });

/** The sorts of docs/api.md §6. */
export const SORTS = [
  'created_at',
  '-created_at',
  'email',
  '-email',
  'name',
  '-name',
  'last_login_at',
  '-last_login_at',
] as const;
export type SortParam = (typeof SORTS)[number];

const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 20 });
const Cursor = Type.String({ minLength: 1, maxLength: 1024 });

export const ListQuery = Type.Object(
  {
    limit: Limit,
    cursor: Type.Optional(Cursor),
    role: Type.Optional(Role),
    status: Type.Optional(Status),
    created_after: Type.Optional(Type.String({ format: 'date-time' })),
    created_before: Type.Optional(Type.String({ format: 'date-time' })),
    // docs/api.md §22: accepted in every form (anything else: 400 validation_failed).
    kind: Type.Optional(Type.Union([Type.Literal('person'), Type.Literal('service')])),
    sort: Type.Union(
      SORTS.map((s) => Type.Literal(s)),
      { default: '-created_at' },
    ),
  },
  { additionalProperties: false },
);
export type ListQuery = Static<typeof ListQuery>;

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }),
    limit: Limit,
    cursor: Type.Optional(Cursor),
    role: Type.Optional(Role),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;

export const UserPage = Type.Object({
  data: Type.Array(UserSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
  total: Type.Integer({ minimum: 0 }),
});
export type UserPage = Static<typeof UserPage>;

const Window = Type.Object({
  last_24h: Type.Integer(),
  last_7d: Type.Integer(),
  last_30d: Type.Integer(),
});

export const StatsResponse = Type.Object({
  total: Type.Integer(),
  by_role: Type.Object({ admin: Type.Integer(), user: Type.Integer() }),
  by_status: Type.Object({ active: Type.Integer(), invited: Type.Integer(), disabled: Type.Integer() }),
  by_kind: Type.Object({ person: Type.Integer(), service: Type.Integer() }),
  created: Window,
  active: Window,
});
export type StatsResponse = Static<typeof StatsResponse>;

/**
 * Any string: a malformed id is a 404 (docs/api.md §6), decided by the service, not a 400 from the
 * schema. 512 is the router's own limit on a path parameter (longer never reaches the schema).
 */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 512 }) });
export type IdParams = Static<typeof IdParams>;

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    email: Type.Optional(EmailInput),
    role: Type.Optional(Role),
    // `invited` belongs to the invitation flow; an admin may only enable or disable an account.
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')])),
    password: Type.Optional(PasswordInput),
    // Admins vouch for an address (docs/api.md §12); a change of address alone sets it false.
    email_verified: Type.Optional(Type.Boolean()),
    locale: Type.Optional(LocaleInput),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateBody = Static<typeof UpdateBody>;

export const CreateBody = Type.Object(
  {
    email: EmailInput,
    name: Type.Optional(Name),
    role: Type.Optional(Role),
    password: Type.Optional(PasswordInput),
    locale: Type.Optional(LocaleInput),
  },
  { additionalProperties: false },
);
export type CreateBody = Static<typeof CreateBody>;
