import { Type } from '@sinclair/typebox';
import { ERROR_CODES } from './errors.ts';

/** The problem+json body of docs/api.md §9, as OpenAPI documents every error response. */
export const ProblemSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  code: Type.Union(Object.keys(ERROR_CODES).map((c) => Type.Literal(c))),
  detail: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  request_id: Type.String(),
});
