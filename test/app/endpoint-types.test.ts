// endpoint() checks a handler's result against its response schema when the code compiles
// (src/http/endpoint.ts). `npm run typecheck` covers this file: each `@ts-expect-error` below
// fails the typecheck the day its line compiles, i.e. the day the check is lost.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { endpoint } from '../../src/http/endpoint.ts';

const Answer = Type.Object({ id: Type.String(), count: Type.Integer() });
const base = {
  group: 'test',
  label: 'x',
  method: 'GET',
  path: '/x',
  access: 'public',
  summary: 'x',
} as const;

const ok = { schema: { response: { 200: Answer } } } as const;
const created = { status: 201, schema: { response: { 200: Answer } } } as const;
const empty = { status: 204, schema: { response: { 204: Type.Null() } } } as const;

describe('endpoint() types', () => {
  it('refuses a handler answering the wrong shape, a status without a schema, a body on 204', () => {
    endpoint({ ...base, ...ok, handler: () => ({ id: 'a', count: 1 }) });
    // @ts-expect-error a field missing from the answer
    endpoint({ ...base, ...ok, handler: () => ({ id: 'a' }) });
    // @ts-expect-error a field of the wrong type
    endpoint({ ...base, ...ok, handler: async () => ({ id: 'a', count: '1' }) });
    // @ts-expect-error status 201 has no response schema
    endpoint({ ...base, ...created, handler: () => ({ id: 'a', count: 1 }) });
    // @ts-expect-error a 204 answers nothing
    endpoint({ ...base, ...empty, handler: () => ({ id: 'a' }) });
    endpoint({ ...base, ...empty, handler: async () => {} });
    assert.ok(true);
  });
});
