import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
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

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

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

/**
 * One endpoint, declared once. Routing, the index `documentation`, the admin module list, the
 * module-disabled check and OpenAPI are all derived from these declarations.
 */
export interface Endpoint<S extends FastifySchema = FastifySchema> {
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
   * The response carries tokens: `Cache-Control: no-store` (RFC 6749 §5.1). Every endpoint that
   * is not public gets it anyway — its responses are about the caller.
   */
  issuesTokens?: boolean;
  /**
   * Handed to a library unparsed (docs/api.md §17: oidc-provider's `/oauth2/*`): the handler runs in
   * `onRequest`, before any body is read, after the request id, security headers and module switch,
   * and answers on the raw response itself (`reply.hijack()`). No schema, no guard.
   */
  raw?: boolean;
  handler: (request: TypedRequest<S>, reply: TypedReply<S>) => unknown;
}

/** Declares an endpoint with its handler typed from its schemas. */
export function endpoint<const S extends FastifySchema>(definition: Endpoint<S>): Endpoint {
  return definition as unknown as Endpoint;
}

/** `GET /api/v1/users/<id>`: how the index and the module list write an endpoint. */
export function describeEndpoint(e: Pick<Endpoint, 'method' | 'path'>): string {
  return `${e.method} ${e.path.replace(/:(\w+)/g, '<$1>')}`;
}
