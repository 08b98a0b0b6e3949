// The Fastify side of errors: the one error handler, the not-found handler, sendProblem and toApiError.
// ApiError and the closed code table are below the HTTP kernel, in src/platform/ (api-error.ts,
// error-codes.ts), so the identity core and the platform may throw them without importing http/.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HashCapacityError } from '../identity/passwords/passwords.ts';
import { ApiError, problemBody } from '../platform/api-error.ts';
import { isDatabaseUnavailable } from '../platform/db/database.ts';

/** Writes an ApiError as problem+json on a reply. */
export function sendProblem(reply: FastifyReply, err: ApiError): FastifyReply {
  // A problem is never a page, whichever route's CSP was set before it (the /docs assets' own).
  reply.header('content-security-policy', BASELINE_HEADERS['content-security-policy']);
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  if (reply.request.url.startsWith('/scim/v2/')) return sendScimError(reply, err);
  return reply
    .status(err.status)
    .type('application/problem+json; charset=utf-8')
    .send(problemBody(err, String(reply.request.id)));
}

/**
 * docs/api.md §23: under /scim/v2 a refusal raised before a SCIM handler runs (the module switch, a
 * body that is not JSON, one too large, an unknown path) is answered in SCIM's error schema too
 * (RFC 7644 §3.12); the SCIM handlers answer their own refusals the same way.
 */
function sendScimError(reply: FastifyReply, err: ApiError): FastifyReply {
  const scimType =
    err.code === 'invalid_json'
      ? 'invalidSyntax'
      : err.code === 'validation_failed'
        ? 'invalidValue'
        : undefined;
  return reply
    .status(err.status)
    .type('application/scim+json; charset=utf-8')
    .send(
      // Text, so that the route's problem+json response schema does not serialize it.
      JSON.stringify({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: String(err.status),
        ...(scimType !== undefined && { scimType }),
        detail: err.status >= 500 ? 'Internal error' : (err.detail ?? err.message),
      }),
    );
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** Maps any thrown error (ours, Fastify's, the database's) to an ApiError. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HashCapacityError) {
    return new ApiError('unavailable', {
      detail: 'Too many password checks are in progress; retry shortly',
      retryAfterS: err.retryAfterS,
    });
  }
  const fe = err as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const context = fe.validationContext ?? 'body';
    const errors = fe.validation.map((v) => ({
      path: fieldPath(v),
      message: validationMessage(v),
    }));
    const first = errors[0];
    const detail = first
      ? `${context}${first.path === '' ? '' : first.path} ${first.message}`
      : 'invalid request';
    return new ApiError('validation_failed', { detail, errors });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('unsupported_media_type', {
        detail: 'Requests with a body must send Content-Type: application/json',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', { detail: 'Request bodies may be at most 64 KiB' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', {
        detail: 'The body is empty but Content-Type is application/json',
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', { detail: 'The body is not valid JSON' });
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      // A malformed URL or a path segment longer than any id: no endpoint has such a path.
      return new ApiError('not_found', { detail: 'No such endpoint' });
  }
  if (err instanceof SyntaxError && (fe.statusCode === 400 || /JSON/.test(err.message))) {
    return new ApiError('invalid_json', { detail: 'The body is not valid JSON' });
  }
  if (fe.statusCode === 413)
    return new ApiError('payload_too_large', { detail: 'Request bodies may be at most 64 KiB' });
  if (fe.statusCode === 415) return new ApiError('unsupported_media_type');
  if (fe.statusCode === 429) return new ApiError('rate_limited', { retryAfterS: 1 });
  if (fe.statusCode === 503) return new ApiError('unavailable', { retryAfterS: 5, cause: err });
  // PostgreSQL refusing a character of the input (a NUL in a path parameter, say): the request's
  // fault, not the server's. Query strings and bodies never get this far with one.
  if (fe.code === '22021' || fe.code === '22P05') {
    return new ApiError('validation_failed', {
      detail: 'The request contains characters that cannot be stored',
    });
  }
  if (isDatabaseUnavailable(err)) {
    return new ApiError('unavailable', { detail: 'The database is unavailable', retryAfterS: 5, cause: err });
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError('validation_failed', { detail: 'The request is malformed' });
  }
  return new ApiError('internal_error', { cause: err });
}

function fieldPath(v: ValidationIssue): string {
  let path = v.instancePath ?? '';
  const p = v.params ?? {};
  if (v.keyword === 'required' && typeof p.missingProperty === 'string') path += `/${p.missingProperty}`;
  if (v.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
    path += `/${p.additionalProperty}`;
  }
  return path;
}

function validationMessage(v: ValidationIssue): string {
  if (v.keyword === 'additionalProperties') return 'is not an allowed field';
  if (v.keyword === 'required') return 'is required';
  return v.message ?? 'is invalid';
}

/**
 * Past this many shed requests in a second, each further one is answered after SHED_PAUSE_MS.
 * Clients that ignore Retry-After (a storm, an attack) otherwise turn refusals into a busy loop: 12
 * connections over the hashing capacity made ~7 000 refusals a second, which took the CPU from the
 * hashing itself (docs/benchmarks.md). A paused refusal holds only a timer — no hashing slot, no
 * queue place — and an occasional refusal is still answered at once.
 */
const SHED_AT_ONCE_PER_S = 20;
export const SHED_PAUSE_MS = 250;

function pausedProblem(reply: FastifyReply, err: ApiError): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(() => {
      if (!reply.raw.destroyed && !reply.request.raw.socket?.destroyed) sendProblem(reply, err);
      resolve();
    }, SHED_PAUSE_MS);
  });
}

/** Installs the one error handler and the not-found handler: everything leaves as problem+json. */
export function installErrorHandlers(app: FastifyInstance, methodsForPath: (path: string) => string[]): void {
  let shedWindowStart = 0;
  let shedInWindow = 0;
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(err);
    if (apiError.code === 'unavailable' && apiError.cause === undefined) {
      // Deliberate load shedding (under pressure, hashing at capacity): a line per refused request
      // would add load exactly when there is too much; their sources log a summary instead.
      request.log.debug({ code: apiError.code, status: apiError.status }, 'request shed');
      const now = Date.now();
      if (now - shedWindowStart >= 1000) {
        shedWindowStart = now;
        shedInWindow = 0;
      }
      if (++shedInWindow > SHED_AT_ONCE_PER_S) return pausedProblem(reply, apiError);
      return sendProblem(reply, apiError);
    }
    if (apiError.status >= 500) {
      // The cause goes to the log (pino's serializer redacts secrets); the client sees only the code.
      request.log.error({ err: apiError.cause ?? err, code: apiError.code }, 'request failed');
    } else {
      request.log.info({ code: apiError.code, status: apiError.status }, 'request refused');
    }
    return sendProblem(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) => {
    const known = methodsForPath(request.url.split('?')[0] ?? request.url);
    if (known.length > 0) {
      return sendProblem(
        reply,
        new ApiError('method_not_allowed', {
          detail: `${request.method} is not allowed here`,
          headers: { allow: known.join(', ') },
        }),
      );
    }
    return sendProblem(reply, new ApiError('not_found', { detail: 'No such endpoint' }));
  });
}

/** Headers every response carries, also those written before any hook runs (see below). */
export const BASELINE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
} as const;
