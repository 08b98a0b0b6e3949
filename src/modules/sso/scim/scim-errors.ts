/*
 * SCIM's own error answer (RFC 7644 §3.12): `application/scim+json`, the Error schema, `status` as a
 * string, `scimType` for the 400s and 409s that have one. Every refusal under /scim/v2 leaves in this
 * shape (src/http/errors.ts renders the ones raised before a SCIM handler runs the same way).
 */

import type { AppContext } from '../../../kernel/context.types.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { Db } from '../../../platform/db/schema.ts';

export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

export type ScimType =
  | 'invalidFilter'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'invalidValue'
  | 'noTarget'
  | 'mutability'
  | 'uniqueness'
  | 'tooMany';

/** A SCIM refusal: its status, its detail (no secrets), and its scimType when RFC 7644 has one. */
export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, detail: string, scimType?: ScimType, headers: Record<string, string> = {}) {
    super(detail);
    this.name = 'ScimError';
    this.status = status;
    this.scimType = scimType;
    this.headers = headers;
  }
}

/** The SCIM error body. */
export function scimErrorBody(status: number, detail: string, scimType?: string) {
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(status),
    ...(scimType !== undefined && { scimType }),
    detail,
  };
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError(400, detail, 'invalidSyntax');
export const uniqueness = (detail: string) => new ScimError(409, detail, 'uniqueness');
export const resourceNotFound = (what: 'User' | 'Group', id: string) =>
  new ScimError(404, `${what} ${id.slice(0, 64)} not found`);

/** `work` in one transaction; a unique-index violation in it answers 409 `uniqueness` with `detail`. */
export async function uniqueTransaction<T>(
  ctx: AppContext,
  detail: string,
  work: (trx: Db) => Promise<T>,
): Promise<T> {
  try {
    return await ctx.db.transaction().execute(work);
  } catch (err) {
    if (isUniqueViolation(err)) throw uniqueness(detail);
    throw err;
  }
}
