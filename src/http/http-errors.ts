import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, problemBody } from '../platform/api-error.ts';
import { BASELINE_HEADERS, sendProblem, toApiError } from './errors.ts';
import { newRequestId } from './request-id.ts';

/**
 * Fastify's `frameworkErrors`: a malformed URL or an over-long path parameter is refused by the
 * router before hooks run (so before the request id and helmet headers are set); without this they
 * left as Fastify's own `application/json`.
 */
export function frameworkErrorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).headers(BASELINE_HEADERS);
  request.log.info({ code: (err as { code?: string }).code }, 'request refused by the router');
  sendProblem(reply, toApiError(err));
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser rejects (headers over 16 KiB, a broken
 * request line, a slow client) get a problem+json answer on the raw socket instead of Fastify's
 * JSON. Status and code stay inside the closed table: 400 `validation_failed`.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const detail =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 'The request line and headers may be at most 16 KiB'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'The request did not arrive in time'
          : 'The request is not valid HTTP';
    const id = newRequestId();
    const body = JSON.stringify(problemBody(new ApiError('validation_failed', { detail }), id));
    const headers = [
      'HTTP/1.1 400 Bad Request',
      'Content-Type: application/problem+json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${id}`,
      ...Object.entries(BASELINE_HEADERS).map(([k, v]) => `${k}: ${v}`),
      'Connection: close',
    ];
    socket.write(`${headers.join('\r\n')}\r\n\r\n${body}`);
  }
  socket.destroy(err);
}
