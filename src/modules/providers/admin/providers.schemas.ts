import { type Static, Type } from '@sinclair/typebox';

const Name = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' });
const Preset = Type.Union([
  Type.Literal('google'),
  Type.Literal('microsoft'),
  Type.Literal('gitlab'),
  Type.Literal('apple'),
  Type.Literal('github'),
]);
const Kind = Type.Union([Type.Literal('oidc'), Type.Literal('github'), Type.Literal('saml')]);
const Url = Type.String({ minLength: 1, maxLength: 512 });
const Scopes = Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$' }), {
  maxItems: 32,
  uniqueItems: true,
});
const Domains = Type.Array(Type.String({ pattern: '^[A-Za-z0-9.-]{1,253}$' }), {
  maxItems: 64,
  uniqueItems: true,
});
const Pem = Type.String({ minLength: 1, maxLength: 16384 });
const AttributeName = Type.String({ minLength: 1, maxLength: 256 });
const AttributeMapping = Type.Union([
  Type.Object(
    { email: Type.Optional(AttributeName), name: Type.Optional(AttributeName) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

/** A SAML connection's settings as answered (docs/api.md §23); never the metadata XML. */
const SamlView = Type.Object({
  idp_entity_id: Type.String(),
  idp_sso_url: Type.String(),
  idp_certificates: Type.Array(Type.String()),
  attribute_mapping: AttributeMapping,
  allow_idp_initiated: Type.Boolean(),
});

/** The `saml` block of a body: every field optional (with idp_metadata_xml, only the last two). */
const SamlBlock = Type.Object(
  {
    idp_entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    idp_sso_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    idp_certificates: Type.Optional(Type.Array(Pem, { minItems: 1, maxItems: 8 })),
    attribute_mapping: Type.Optional(AttributeMapping),
    allow_idp_initiated: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Secret = Type.String({ minLength: 1, maxLength: 4096 });
const PrivateKey = Type.String({ minLength: 1, maxLength: 8192 });
const Flag = Type.Boolean();

/** A provider as the admin API answers it (docs/api.md §18); secrets never leave. */
export const ProviderSchema = Type.Object({
  name: Type.String(),
  display_name: Type.String(),
  kind: Kind,
  preset: Type.Union([Preset, Type.Null()]),
  // Null for kind `saml` (docs/api.md §23).
  issuer: Type.Union([Type.String(), Type.Null()]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Union([Type.Array(Type.String()), Type.Null()]),
  enabled: Type.Boolean(),
  auto_provision: Type.Boolean(),
  link_by_email: Type.Boolean(),
  link_admins: Type.Boolean(),
  allowed_domains: Type.Array(Type.String()),
  organization_id: Type.Union([Type.String(), Type.Null()]),
  domains: Type.Array(Type.String()),
  saml: Type.Optional(SamlView),
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
  /** docs/api.md §23: the owning organization and the e-mail domains a connection claims. */
  organization_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  domains: Type.Optional(Domains),
  saml: Type.Optional(SamlBlock),
  /** The IdP's metadata document, read once (never stored or answered). */
  idp_metadata_xml: Type.Optional(Type.String({ minLength: 1, maxLength: 60_000 })),
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
