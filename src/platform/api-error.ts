// ApiError: the one error a service throws to answer with a code of the closed table
// (error-codes.ts, docs/api.md §9); src/http/errors.ts turns it into problem+json.
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

export interface ProblemFieldError {
  path: string;
  message: string;
}

export interface ApiErrorOptions {
  detail?: string;
  errors?: ProblemFieldError[];
  headers?: Record<string, string>;
  /** Seconds for `Retry-After` (429, 503). */
  retryAfterS?: number;
  cause?: unknown;
  /**
   * A status other than the table's, where docs/api.md names one code with two statuses: `passkey_invalid`
   * is 401 at sign-in but 400 for a registration that fails verification (§13).
   */
  status?: 400;
  /** RFC 9457 extension members (docs/api.md §13: `mfa_token`, `methods` of `mfa_required`). */
  extensions?: ProblemExtensions;
}

/** The extension members a problem may carry; each is declared in ProblemSchema too. */
export interface ProblemExtensions {
  mfa_token?: string;
  methods?: string[];
  /** `mfa_enrollment_required` of a sign-in (REQUIRE_MFA, docs/mfa.md): the enrolment-only token. */
  enrollment_token?: string;
  expires_in?: number;
  /** `sso_required` (docs/api.md §23): the organization's connection's start URL. */
  start_url?: string;
}

/** An error that becomes a problem+json response with a code from the closed table. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly errors: ProblemFieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: ProblemExtensions | undefined;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.detail ?? ERROR_CODES[code].title, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.detail = options.detail;
    this.errors = options.errors;
    this.headers = { ...options.headers };
    this.extensions = options.extensions;
    if (options.retryAfterS !== undefined)
      this.headers['retry-after'] = String(Math.max(1, Math.ceil(options.retryAfterS)));
  }
}

/** The problem+json body of docs/api.md §9. */
export interface ProblemBody extends ProblemExtensions {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail?: string;
  errors?: ProblemFieldError[];
  request_id: string;
}

/** Builds the problem+json body for an ApiError. */
export function problemBody(err: ApiError, requestId: string): ProblemBody {
  const body: ProblemBody = {
    type: `https://gatehouse.dev/problems/${err.code}`,
    title: ERROR_CODES[err.code].title,
    status: err.status,
    code: err.code,
    request_id: requestId,
  };
  if (err.detail !== undefined) body.detail = err.detail;
  if (err.errors !== undefined) body.errors = err.errors;
  if (err.extensions !== undefined) Object.assign(body, err.extensions);
  return body;
}
