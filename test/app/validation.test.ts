import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createValidatorCompiler } from '../../src/http/validation.ts';

// Validators are compiled when their route is registered (src/http/validation.ts): at start.
describe('request validators', () => {
  const compiler = createValidatorCompiler();
  const validator = (schema: object, httpPart: string) =>
    compiler({ schema, httpPart, method: 'POST', url: '/t' }) as ((
      data: unknown,
      cxt?: object,
    ) => boolean) & {
      errors: unknown;
    };

  it('compiles at once: a schema Ajv cannot compile fails at start, not on a request', () => {
    assert.throws(
      () => validator({ type: 'object', properties: { a: { type: 'no-such-type' } } }, 'body'),
      /schema is invalid/,
    );
  });

  it('keeps the errors of the last call where Fastify reads them', () => {
    const body = validator(
      {
        type: 'object',
        properties: { n: { type: 'integer' } },
        required: ['n'],
        additionalProperties: false,
      },
      'body',
    );
    assert.equal(body({ n: '5' }), false, 'bodies are not coerced');
    assert.match(JSON.stringify(body.errors), /must be integer/);
    assert.equal(body({ n: 5 }), true);
    assert.equal(body.errors, null);
  });

  it('coerces query strings, defaults included', () => {
    const query = validator(
      { type: 'object', properties: { limit: { type: 'integer', default: 50 }, page: { type: 'integer' } } },
      'querystring',
    );
    const data: Record<string, unknown> = { page: '3' };
    assert.equal(query(data, { parentData: { query: data }, parentDataProperty: 'query' }), true);
    assert.deepEqual(data, { page: 3, limit: 50 });
  });
});
