import type { scimPatch } from 'scim-patch';
import { invalidSyntax, ScimError } from './scim-errors.ts';
import { attr, PATCH_SCHEMA } from './scim-user-view.ts';

// Reading a PatchOp body (RFC 7644 §3.5.2) for scim-patch, and its refusals as SCIM errors.

export type PatchOperation = Parameters<typeof scimPatch>[1][number];

/** The `Operations` of a PatchOp body (RFC 7644 §3.5.2). */
export function readOperations(body: unknown): PatchOperation[] {
  const o = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : null;
  const schemas = o ? attr(o, 'schemas') : undefined;
  const ops = o ? attr(o, 'Operations') : undefined;
  if (
    !o ||
    !Array.isArray(schemas) ||
    !schemas.includes(PATCH_SCHEMA) ||
    !Array.isArray(ops) ||
    ops.length === 0
  ) {
    throw invalidSyntax(`A PATCH body has "schemas": ["${PATCH_SCHEMA}"] and a non-empty "Operations" array`);
  }
  if (ops.length > 1000) throw new ScimError(400, 'At most 1000 operations per request', 'tooMany');
  return ops.map((op, i) => {
    if (typeof op !== 'object' || op === null) throw invalidSyntax(`Operations[${i}] must be an object`);
    const r = op as Record<string, unknown>;
    const name = attr(r, 'op');
    if (typeof name !== 'string' || !/^(add|replace|remove)$/i.test(name)) {
      throw invalidSyntax(`Operations[${i}].op must be add, replace or remove`);
    }
    const path = attr(r, 'path');
    if (path !== undefined && typeof path !== 'string')
      throw invalidSyntax(`Operations[${i}].path must be a string`);
    return {
      op: name.toLowerCase(),
      ...(path !== undefined && { path }),
      value: attr(r, 'value'),
    } as PatchOperation;
  });
}

/** scim-patch's refusals as SCIM errors (its own scimType when it names one). */
export function patchRefusal(err: unknown): never {
  const code = (err as { scimCode?: string }).scimCode;
  const known = ['invalidPath', 'invalidValue', 'noTarget', 'invalidSyntax'] as const;
  const scimType = known.find((k) => k === code) ?? 'invalidValue';
  throw new ScimError(
    400,
    err instanceof Error ? err.message.slice(0, 300) : 'The PATCH cannot be applied',
    scimType,
  );
}
