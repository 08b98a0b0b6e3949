import { type Static, Type } from '@sinclair/typebox';

/** The longest an access token for an API may live (the signing keys stay published as long). */
export const MAX_RESOURCE_TTL_S = 86_400;

const Uri = Type.String({ minLength: 1, maxLength: 2000 });
const ScopeName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const GrantType = Type.Union([
  Type.Literal('authorization_code'),
  Type.Literal('refresh_token'),
  Type.Literal('client_credentials'),
]);
const AuthMethod = Type.Union([
  Type.Literal('client_secret_basic'),
  Type.Literal('client_secret_post'),
  Type.Literal('none'),
]);

/** A client as the admin API shows it (docs/api.md §17); `client_secret` only at create and rotate. */
export const ClientSchema = Type.Object({
  client_id: Type.String(),
  name: Type.String(),
  type: Type.Union([Type.Literal('confidential'), Type.Literal('public')]),
  application_type: Type.Union([Type.Literal('web'), Type.Literal('native')]),
  redirect_uris: Type.Array(Type.String()),
  post_logout_redirect_uris: Type.Array(Type.String()),
  grant_types: Type.Array(Type.String()),
  scopes: Type.Array(Type.String()),
  resources: Type.Array(Type.String()),
  first_party: Type.Boolean(),
  introspection: Type.Boolean(),
  registered: Type.Boolean(),
  pkce_required: Type.Boolean(),
  token_endpoint_auth_method: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const ClientWithSecret = Type.Object({
  ...ClientSchema.properties,
  client_secret: Type.Optional(Type.String()),
});
export const ClientList = Type.Object({ data: Type.Array(ClientSchema) });

const clientFields = {
  name: Name,
  type: Type.Union([Type.Literal('confidential'), Type.Literal('public')]),
  application_type: Type.Union([Type.Literal('web'), Type.Literal('native')]),
  redirect_uris: Type.Array(Uri, { maxItems: 20 }),
  post_logout_redirect_uris: Type.Array(Uri, { maxItems: 20 }),
  grant_types: Type.Array(GrantType, { minItems: 1, maxItems: 3, uniqueItems: true }),
  scopes: Type.Array(ScopeName, { maxItems: 100, uniqueItems: true }),
  resources: Type.Array(Uri, { maxItems: 50, uniqueItems: true }),
  first_party: Type.Boolean(),
  introspection: Type.Boolean(),
  pkce_required: Type.Boolean(),
  token_endpoint_auth_method: AuthMethod,
};
export const ClientCreateBody = Type.Object(
  {
    name: Name,
    type: Type.Optional(clientFields.type),
    application_type: Type.Optional(clientFields.application_type),
    redirect_uris: Type.Optional(clientFields.redirect_uris),
    post_logout_redirect_uris: Type.Optional(clientFields.post_logout_redirect_uris),
    grant_types: Type.Optional(clientFields.grant_types),
    scopes: Type.Optional(clientFields.scopes),
    resources: Type.Optional(clientFields.resources),
    first_party: Type.Optional(clientFields.first_party),
    introspection: Type.Optional(clientFields.introspection),
    pkce_required: Type.Optional(clientFields.pkce_required),
    token_endpoint_auth_method: Type.Optional(clientFields.token_endpoint_auth_method),
  },
  { additionalProperties: false },
);
export type ClientCreateBody = Static<typeof ClientCreateBody>;
export const ClientUpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    application_type: Type.Optional(clientFields.application_type),
    redirect_uris: Type.Optional(clientFields.redirect_uris),
    post_logout_redirect_uris: Type.Optional(clientFields.post_logout_redirect_uris),
    grant_types: Type.Optional(clientFields.grant_types),
    scopes: Type.Optional(clientFields.scopes),
    resources: Type.Optional(clientFields.resources),
    first_party: Type.Optional(clientFields.first_party),
    introspection: Type.Optional(clientFields.introspection),
    pkce_required: Type.Optional(clientFields.pkce_required),
    token_endpoint_auth_method: Type.Optional(clientFields.token_endpoint_auth_method),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ClientUpdateBody = Static<typeof ClientUpdateBody>;

const ResourceScope = Type.Object(
  { name: ScopeName, description: Type.String({ maxLength: 500 }) },
  { additionalProperties: false },
);
export const ResourceSchema = Type.Object({
  id: Type.String(),
  identifier: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  access_token_ttl_s: Type.Integer(),
  rbac: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const ResourceList = Type.Object({ data: Type.Array(ResourceSchema) });
export const ResourceCreateBody = Type.Object(
  {
    identifier: Uri,
    name: Name,
    scopes: Type.Optional(Type.Array(ResourceScope, { maxItems: 100 })),
    access_token_ttl_s: Type.Optional(Type.Integer({ minimum: 30, maximum: MAX_RESOURCE_TTL_S })),
    rbac: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ResourceCreateBody = Static<typeof ResourceCreateBody>;
export const ResourceUpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    scopes: Type.Optional(Type.Array(ResourceScope, { maxItems: 100 })),
    access_token_ttl_s: Type.Optional(Type.Integer({ minimum: 30, maximum: MAX_RESOURCE_TTL_S })),
    rbac: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ResourceUpdateBody = Static<typeof ResourceUpdateBody>;
export const ClientIdParams = Type.Object({ id: Type.String({ maxLength: 512 }) });

/** `POST /api/v1/clients/registration-tokens` (docs/oauth.md): the bounds are the CLI's `--ttl`. */
export const RegistrationTokenBody = Type.Object(
  { ttl_s: Type.Optional(Type.Integer({ minimum: 60, maximum: 31_536_000 })) },
  { additionalProperties: false },
);
export const RegistrationTokenSchema = Type.Object({
  token: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
});
