import { type Static, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../platform/error-codes.ts';

/** The problem+json body of docs/api.md §9, as OpenAPI documents every error response. */
export const ProblemSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  code: Type.Union(Object.keys(ERROR_CODES).map((c) => Type.Literal(c))),
  detail: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  request_id: Type.String(),
  // Extension members (RFC 9457 §3.2) of `mfa_required` (docs/api.md §13).
  mfa_token: Type.Optional(Type.String()),
  methods: Type.Optional(Type.Array(Type.String())),
  enrollment_token: Type.Optional(Type.String()),
  expires_in: Type.Optional(Type.Integer()),
  // `sso_required` (docs/api.md §23): where the organization's connection starts.
  start_url: Type.Optional(Type.String()),
});
export type ProblemSchema = Static<typeof ProblemSchema>;
