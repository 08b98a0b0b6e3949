import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What an incoming X-Request-Id must look like to be echoed (docs/api.md §1); anything else is replaced. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** A fresh request id: random, so it tells an outsider nothing (a counter would count requests). */
export function newRequestId(): string {
  return randomUUID();
}

/** Fastify's genReqId: a well-formed incoming X-Request-Id is kept, so traces span services. */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && WELL_FORMED.test(incoming) ? incoming : newRequestId();
}
