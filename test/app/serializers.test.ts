import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { ProblemSchema } from '../../src/http/problem.schemas.ts';
import { sharedSerializerFactory } from '../../src/http/serializers.ts';

const route = (schema: unknown, url: string, httpStatus = '4xx') => ({
  schema,
  url,
  method: 'GET',
  httpStatus,
});

describe('shared response serializers', () => {
  // Pins: every route compiled its own copy of the same problem serializer (~80 at start).
  it('compiles one serializer per schema object, whatever the route or status', () => {
    const compile = sharedSerializerFactory()({}, {});
    const first = compile(route(ProblemSchema, '/a'));
    assert.equal(compile(route(ProblemSchema, '/b', '5xx')), first);
    const lookalike = structuredClone(ProblemSchema);
    assert.notEqual(compile(route(lookalike, '/a')), first, 'another object is compiled on its own');
  });

  it('compiles a serializer at its first use, not at start', () => {
    const compile = sharedSerializerFactory()({}, {});
    // fast-json-stringify refuses a $ref it cannot resolve, when it compiles.
    const unresolvable = compile(route({ $ref: 'no-such-schema#' }, '/a', '200'));
    assert.throws(() => unresolvable({}));
  });

  it('serializes exactly as fastify default serializer does (extra fields dropped)', () => {
    const shared = sharedSerializerFactory()({}, {})(route(ProblemSchema, '/a'));
    const fresh = SerializerSelector()({}, {})(route(ProblemSchema, '/a'));
    const problem = {
      type: 'https://gatehouse.dev/problems/not_found',
      title: 'Not found',
      status: 404,
      code: 'not_found',
      detail: 'No such user',
      request_id: 'r1',
      stack: 'never sent',
    };
    assert.equal(shared(problem), fresh(problem));
    assert.doesNotMatch(shared(problem), /never sent/);
  });

  it('keeps separate caches per factory call (each has its own shared schemas)', () => {
    const factory = sharedSerializerFactory();
    const a = factory({}, {})(route(ProblemSchema, '/a'));
    const b = factory({}, {})(route(ProblemSchema, '/a'));
    assert.notEqual(a, b);
  });
});
