import type { AuthContext } from '../../http/guard.ts';
import type { AuditActor, ClientInfo } from '../../identity/index.ts';
import { ApiError, type ProblemFieldError } from '../../platform/api-error.ts';

/** Who makes a change, for its audit entry and the checks on it. */
export interface Caller {
  auth: AuthContext;
  actor: AuditActor;
  client: ClientInfo | null;
}

export const isAdmin = (c: Caller): boolean => c.auth.user.role === 'admin';

export const iso = (ms: number): string => new Date(ms).toISOString();

/** 400 `validation_failed` naming the field. */
export function invalid(path: string, message: string): ApiError {
  const errors: ProblemFieldError[] = [{ path, message }];
  return new ApiError('validation_failed', { detail: `${path.slice(1) || 'request'} ${message}`, errors });
}

export const roleNotFound = (name: string): ApiError =>
  new ApiError('role_not_found', { detail: `No role named ${JSON.stringify(name.slice(0, 64))}` });

/** The one answer for an organization the caller may not see, or that does not exist (no oracle). */
export const organizationNotFound = (): ApiError =>
  new ApiError('organization_not_found', { detail: 'No such organization' });
