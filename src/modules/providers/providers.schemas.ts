import { type Static, Type } from '@sinclair/typebox';

const Name = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' });
const Preset = Type.Union([
  Type.Literal('google'),
  Type.Literal('microsoft'),
  Type.Literal('gitlab'),
  Type.Literal('apple'),
  Type.Literal('github'),
]);
const Kind = Type.Union([Type.Literal('oidc'), Type.Literal('github')]);
const Url = Type.String({ minLength: 1, maxLength: 512 });
const Scopes = Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$' }), {
  maxItems: 32,
  uniqueItems: true,
});
const Domains = Type.Array(Type.String({ pattern: '^[A-Za-z0-9.-]{1,253}$' }), {
  maxItems: 64,
  uniqueItems: true,
});
const Secret = Type.String({ minLength: 1, maxLength: 4096 });
const PrivateKey = Type.String({ minLength: 1, maxLength: 8192 });
const Flag = Type.Boolean();

/** A provider as the admin API answers it (docs/api.md §18); secrets never leave. */
export const ProviderSchema = Type.Object({
  name: Type.String(),
  display_name: Type.String(),
  kind: Kind,
  preset: Type.Union([Preset, Type.Null()]),
  issuer: Type.String(),
  client_id: Type.String(),
  scopes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  auto_provision: Type.Boolean(),
  link_by_email: Type.Boolean(),
  link_admins: Type.Boolean(),
  allowed_domains: Type.Array(Type.String()),
});
export type ProviderView = Static<typeof ProviderSchema>;

export const ProviderList = Type.Object({ data: Type.Array(ProviderSchema) });

// Fields both create and update take; all optional on update.
const settable = {
  display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  issuer: Type.Optional(Url),
  client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  client_secret: Type.Optional(Secret),
  scopes: Type.Optional(Scopes),
  enabled: Type.Optional(Flag),
  auto_provision: Type.Optional(Flag),
  link_by_email: Type.Optional(Flag),
  link_admins: Type.Optional(Flag),
  allowed_domains: Type.Optional(Domains),
  /** microsoft: the directory (tenant) id, a GUID. */
  tenant_id: Type.Optional(Type.String({ maxLength: 64 })),
  /** apple: the team id, the key id and the `.p8` private key (write-only). */
  team_id: Type.Optional(Type.String({ pattern: '^[A-Z0-9]{10}$' })),
  key_id: Type.Optional(Type.String({ pattern: '^[A-Z0-9]{10}$' })),
  private_key: Type.Optional(PrivateKey),
  /** github: the API base (GitHub Enterprise Server; default https://api.github.com). */
  api_url: Type.Optional(Url),
};

export const CreateProviderBody = Type.Object(
  {
    name: Name,
    kind: Type.Optional(Kind),
    preset: Type.Optional(Type.Union([Preset, Type.Null()])),
    ...settable,
  },
  { additionalProperties: false },
);
export type CreateProviderInput = Static<typeof CreateProviderBody>;

export const UpdateProviderBody = Type.Object(settable, { additionalProperties: false, minProperties: 1 });
export type UpdateProviderInput = Static<typeof UpdateProviderBody>;

export const ProviderParams = Type.Object({ name: Type.String({ maxLength: 64 }) });

export const StartQuery = Type.Object(
  { return_to: Type.Optional(Type.String({ maxLength: 2048 })) },
  { additionalProperties: false },
);

/** The callback's parameters (query or form_post body); the flow itself reads the raw request. */
export const CallbackFields = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
    error_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    iss: Type.Optional(Type.String({ maxLength: 512 })),
    session_state: Type.Optional(Type.String({ maxLength: 512 })),
    scope: Type.Optional(Type.String({ maxLength: 2048 })),
    authuser: Type.Optional(Type.String({ maxLength: 64 })),
    hd: Type.Optional(Type.String({ maxLength: 253 })),
    prompt: Type.Optional(Type.String({ maxLength: 64 })),
    user: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

/** A linked identity as its owner (and admins) see it. */
export const IdentitySchema = Type.Object({
  id: Type.String(),
  provider: Type.Union([Type.String(), Type.Null()]),
  display_name: Type.Union([Type.String(), Type.Null()]),
  issuer: Type.String(),
  subject: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  linked_at: Type.String(),
});
export const IdentityList = Type.Object({ data: Type.Array(IdentitySchema) });
export const IdentityParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** `DELETE /idp/identities/<id>` and `GET /idp/<name>/link` take a fresh proof of docs/api.md §16. */
export { FreshProofBody } from '../../identity/index.ts';

/** `GET /idp/<name>/link`: where the page sends the browser next (no token in it). */
export const LinkResponse = Type.Object({ authorization_url: Type.String() });

/** `POST /idp/continue`: the pending second factor of a provider sign-in, for the sign-in page. */
export const ContinueResponse = Type.Object({
  mfa_token: Type.String(),
  methods: Type.Array(Type.String()),
  return_to: Type.String(),
});
