import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo } from '../../identity/index.ts';
import { requestActor } from '../audit/index.ts';
import type { Caller } from './common.ts';

/** The authenticated caller of a request, with what its audit entries name. */
export function callerOf(req: FastifyRequest): Caller {
  return { auth: requireAuth(req), actor: requestActor(req), client: clientInfo(req) };
}

/**
 * A PUT that answers 201 when it created and 200 when it changed (docs/api.md §21): the handler
 * marks the body it returns, and the endpoint's `statusOf` reads the mark (JSON never carries it).
 */
export function createdOrChanged() {
  const created = new WeakSet<object>();
  return {
    mark<T extends object>(body: T, isNew: boolean): T {
      if (isNew) created.add(body);
      return body;
    },
    status: (body: object): 200 | 201 => (created.has(body) ? 201 : 200),
  };
}
