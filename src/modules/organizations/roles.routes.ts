import type { Endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';

/** docs/api.md §21. */
export function roleEndpoints(_ctx: AppContext): Endpoint[] {
  return [];
}
