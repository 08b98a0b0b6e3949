import { ApiError } from '../platform/api-error.ts';

/**
 * Parses a JSON request body. Like Fastify's own parser it refuses prototype-poisoning keys
 * (`__proto__`, `constructor.prototype`), but says so instead of calling the JSON invalid. An
 * empty body counts as no body: the route's schema then decides (clients that always send
 * `Content-Type: application/json`, even on a bodiless logout, are common).
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_json', { detail: 'The body is not valid JSON' });
  }
  const forbidden = findForbiddenKey(value);
  if (forbidden !== null) {
    throw new ApiError('invalid_json', {
      detail: `The body contains the forbidden property name "${forbidden}"`,
    });
  }
  return value;
}

// Iterative, so a deeply nested body cannot overflow the stack. JSON.parse decodes escapes, so
// `"\u005f_proto__"` is caught here too.
function findForbiddenKey(root: unknown): string | null {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    if (Object.hasOwn(record, '__proto__')) return '__proto__';
    const ctor = Object.hasOwn(record, 'constructor') ? record.constructor : undefined;
    if (ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) {
      return 'constructor.prototype';
    }
    for (const key of Object.keys(record)) stack.push(record[key]);
  }
  return null;
}
