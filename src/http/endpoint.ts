import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import type {
  ContextConfigDefault,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify';
import { enrollmentGrantOf } from '../identity/require-mfa.ts';
import { ApiError } from '../platform/api-error.ts';

// OPTIONS: the authorization server's CORS preflights, answered by oidc-provider (docs/api.md §17).
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** Who may call an endpoint; the guard enforces it before the body is even parsed. */
export type Access = 'public' | 'authenticated' | 'admin';

export type TypedRequest<S extends FastifySchema> = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  S,
  TypeBoxTypeProvider
>;

export type TypedReply<S extends FastifySchema> = FastifyReply<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

/** The statuses a data handler's answer may be declared with. */
export type SuccessStatus = 200 | 201 | 202 | 204;

type Awaitable<T> = T | Promise<T>;
type Responses<S> = S extends { response: infer R } ? R : Record<never, never>;

/**
 * What a data handler must return for status `St`: the TypeBox `Static` of that status's response
 * schema; nothing for 204. A status without a response schema makes every return a type error.
 */
export type ResponseBody<S extends FastifySchema, St extends number> = St extends 204
  ? // biome-ignore lint/suspicious/noConfusingVoidType: a 204 handler returns nothing (an async function's Promise<void>)
    void
  : St extends keyof Responses<S>
    ? Responses<S>[St] extends TSchema
      ? Static<Responses<S>[St]>
      : never
    : never;

/** What every endpoint declares, whatever its handler. */
interface EndpointBase<S extends FastifySchema> {
  /** Index group and label (docs/api.md §3), e.g. `auth` / `login`. */
  group: string;
  label: string;
  method: HttpMethod;
  /** Fastify path, parameters as `:id` (the index shows them as `<id>`). */
  path: string;
  access: Access;
  summary: string;
  schema: S;
  /** Served but not listed in the index (e.g. `/.well-known/jwks.json`). */
  hidden?: boolean;
  /**
   * The response carries tokens: `Cache-Control: no-store` on every answer, refusals of the
   * schema and the guard included (RFC 6749 §5.1). Every endpoint that is not public gets it
   * anyway — its responses are about the caller.
   */
  issuesTokens?: boolean;
  /**
   * Also answers an enrolment-only session (REQUIRE_MFA, docs/mfa.md): the endpoints that add a
   * second factor and what they need (the factor status, the caller's profile, logout).
   */
  enrollment?: true;
  /**
   * API keys (docs/api.md §22): `'refused'` on the endpoints that change credentials (403
   * `forbidden` for a key, whatever its scopes). Every other endpoint answers a key holding its
   * scope, which derives from this declaration: `<group>:read` for GET, `<group>:write` otherwise
   * (`scopeOf`), unless `scope` names another. `'unrecognized'`: a key is no token here at all and
   * gets the access tokens' 401 `token_invalid` (`auth.verify_token`).
   */
  apiKeys?: 'refused' | 'unrecognized';
  /** The scope a key needs here when it is not the derived one (`api_keys.verify`: `api_keys:verify`). */
  scope?: string;
  /**
   * Also answers an OAuth client's access token for Gatehouse's own API (`<PUBLIC_URL>/api/v1`)
   * holding this endpoint's scope (docs/api.md §22: `api_keys.verify`); on every other endpoint
   * such a token is refused 401 `token_invalid` like any token for another audience (§17).
   */
  oauthClients?: true;
}

/** The scope an API key needs for an endpoint: declared, or derived from its group and method. */
export function scopeOf(e: { group: string; method: HttpMethod; scope?: string }): string {
  return e.scope ?? `${e.group}:${e.method === 'GET' ? 'read' : 'write'}`;
}

/** The usual endpoint: the handler returns data; the status and headers are declared here. */
export interface DataEndpoint<S extends FastifySchema, St extends SuccessStatus> extends EndpointBase<S> {
  /** The success status (default 200); its response schema types the handler's result. */
  status?: St;
  /** Only where the status depends on the answer (the health checks: 200 or 503). */
  statusOf?: (body: ResponseBody<S, St>) => keyof Responses<S> & number;
  /** The `Location` of a created resource (201). */
  location?: (body: ResponseBody<S, St>) => string;
  /**
   * `Cache-Control` of the handler's answers, refusals the handler throws included (e.g. `no-store`
   * on a public answer about a bearer secret, `public, max-age=300` on the JWKS).
   */
  cacheControl?: string;
  /**
   * A public document any browser app may read, whatever CORS_ORIGINS says
   * (`Access-Control-Allow-Origin: *`; no credentials): the JWKS (docs/api.md §17).
   */
  anyOrigin?: true;
  handler: (request: TypedRequest<S>) => Awaitable<ResponseBody<S, St>>;
  ownsReply?: never;
}

/**
 * The escape for a handler that truly needs the reply (a page, a static file with its ETag, a
 * non-JSON body): it must send the answer itself. docs/architecture.md lists the ones there are.
 */
export interface ReplyEndpoint<S extends FastifySchema> extends EndpointBase<S> {
  ownsReply: true;
  /**
   * Handed to a library unparsed (docs/api.md §17: oidc-provider's `/oauth2/*`): the handler runs in
   * `onRequest`, before any body is read, after the request id, security headers and module switch,
   * and answers on the raw response itself (`reply.hijack()`). No schema, no guard.
   */
  raw?: true;
  handler: (request: TypedRequest<S>, reply: TypedReply<S>) => Awaitable<FastifyReply>;
}

/** A declared endpoint, as the app registers it: the handler is ready for Fastify. */
export interface Endpoint extends EndpointBase<FastifySchema> {
  /** A raw handoff (see `ReplyEndpoint.raw`). */
  raw?: boolean;
  handler: (request: FastifyRequest, reply: FastifyReply) => unknown;
}

/**
 * Declares an endpoint with its handler typed from its schemas: the request from `params`,
 * `querystring` and `body`; a data handler's result from the response schema of its `status`.
 */
export function endpoint<const S extends FastifySchema>(definition: ReplyEndpoint<S>): Endpoint;
export function endpoint<const S extends FastifySchema, const St extends SuccessStatus = 200>(
  definition: DataEndpoint<S, St>,
): Endpoint;
export function endpoint(
  definition: DataEndpoint<FastifySchema, SuccessStatus> | ReplyEndpoint<FastifySchema>,
): Endpoint {
  if (definition.ownsReply === true) {
    const { ownsReply: _, ...rest } = definition;
    return rest as unknown as Endpoint;
  }
  const {
    status = 200,
    statusOf,
    location,
    cacheControl,
    anyOrigin,
    handler,
    ...rest
  } = definition as unknown as DataEndpoint<FastifySchema, SuccessStatus>;
  const finish = (reply: FastifyReply, body: unknown): unknown => {
    // An enrolment-only sign-in (REQUIRE_MFA, docs/mfa.md) committed its session; it answers the
    // grant, never a token pair.
    const grant = enrollmentGrantOf(body);
    if (grant !== null) {
      throw new ApiError('mfa_enrollment_required', {
        detail:
          'This account must add a second factor before it can sign in: use enrollment_token as the Bearer token of the enrolment endpoints (GET /api/v1/mfa, POST /api/v1/mfa/totp, POST /api/v1/passkeys/registration/options …), then sign in again with the factor',
        extensions: { ...grant },
      });
    }
    if (statusOf !== undefined) reply.status(statusOf(body as never));
    else if (status !== 200) reply.status(status);
    if (location !== undefined) reply.header('location', location(body as never));
    if (status === 204) return reply.send(null);
    return body;
  };
  return {
    ...rest,
    handler: (request, reply) => {
      if (cacheControl !== undefined) reply.header('cache-control', cacheControl);
      if (anyOrigin) reply.header('access-control-allow-origin', '*');
      const out = handler(request as never);
      if (out instanceof Promise) return out.then((body) => finish(reply, body));
      const answer = finish(reply, out);
      // A sync handler's sent reply is not handed back to Fastify (it would be sent twice).
      return answer === reply ? undefined : answer;
    },
  };
}

/** `GET /api/v1/users/<id>`: how the index and the module list write an endpoint. */
export function describeEndpoint(e: Pick<Endpoint, 'method' | 'path'>): string {
  return `${e.method} ${e.path.replace(/:(\w+)/g, '<$1>')}`;
}
