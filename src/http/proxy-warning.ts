import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../kernel/context.types.ts';

/**
 * With TRUST_PROXY=false behind a proxy, every client has the proxy's address: the per-address login
 * throttle then counts everyone together, and a few dozen failed sign-ins a minute lock the whole site
 * out. An `X-Forwarded-For` header is the sign of a proxy; the first one seen is logged, once per
 * process (docs/deployment.md). Returns the per-request check, or null when TRUST_PROXY is set.
 */
export function forwardedWithoutTrust(ctx: AppContext): ((request: FastifyRequest) => void) | null {
  const { trustProxy, loginFailuresPerAddressPerMin: limit } = ctx.config;
  if (trustProxy !== false) return null;
  let warned = false;
  return (request) => {
    if (warned || request.headers['x-forwarded-for'] === undefined) return;
    warned = true;
    ctx.log.warn(
      { client_address: request.ip },
      `requests carry X-Forwarded-For but TRUST_PROXY is false: every client gets the proxy's address (${request.ip}), so ${limit} failed sign-ins a minute from anyone (LOGIN_FAILURES_PER_ADDRESS_PER_MIN) lock the whole site out, and audit and session records name the proxy; set TRUST_PROXY to the proxy's address (docs/deployment.md)`,
    );
  };
}
