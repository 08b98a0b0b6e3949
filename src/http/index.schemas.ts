import { type Static, Type } from '@sinclair/typebox';

/** The index of docs/api.md §3. */
export const IndexResponse = Type.Object({
  message: Type.String(),
  status: Type.Literal('running'),
  version: Type.Literal('v1'),
  documentation: Type.Record(Type.String(), Type.Record(Type.String(), Type.String())),
});
export type IndexResponse = Static<typeof IndexResponse>;
