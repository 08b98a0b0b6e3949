import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

const COMMON: Options = {
  allErrors: false,
  // Unknown fields are refused (API.md §1), never dropped or stored.
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  // TypeBox adds `kind`/`modifier` symbols only; keep Ajv from complaining about keywords it lacks.
  keywords: ['kind', 'modifier'],
};

/**
 * Two validators: bodies are checked as sent (a number is not a string), while query strings and
 * path parameters, which are text on the wire, are coerced to the declared types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  const strict = addFormats.default(new Ajv({ ...COMMON, coerceTypes: false }));
  const coercing = addFormats.default(new Ajv({ ...COMMON, coerceTypes: 'array' }));
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object);
  };
}
