import { ApiError } from '../platform/api-error.ts';

/**
 * The routes that read an `application/x-www-form-urlencoded` body: a provider's callback, which
 * `form_post` providers (Apple) answer with a POST (docs/api.md §18), and a SAML connection's assertion
 * consumer service (HTTP-POST binding, docs/api.md §23). Everywhere else such a body is 415.
 */
export const FORM_POST_ROUTES: ReadonlySet<string> = new Set([
  '/api/v1/idp/:name/callback',
  '/saml/:name/acs',
]);

/** Parses a form body into fields; a field sent twice is refused (which value would count is ambiguous). */
export function formFields(body: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(fields, name)) {
      throw new ApiError('validation_failed', { detail: `body/${name.slice(0, 32)} is sent more than once` });
    }
    fields[name] = value;
  }
  return fields;
}
