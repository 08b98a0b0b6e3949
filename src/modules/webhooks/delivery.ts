import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { v7 as uuidv7 } from 'uuid';
import { pruneEvents, recordAudit } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { renderAccountMail } from '../../platform/mail/layout.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';
import { createDeliveryAgents, type DeliveryAgents } from '../../platform/outbound/address-guard.ts';
import { postJson } from '../../platform/outbound/http-post.ts';
import { signedHeaders } from '../../platform/outbound/standard-webhooks.ts';
import {
  type AttemptResult,
  activeAdmins,
  type ClaimedAttempt,
  claimDueAttempts,
  disableFailingEndpoint,
  markEndpointFailing,
  markEndpointHealthy,
  recordAttempt,
  renewLeases,
} from './delivery.queries.ts';
import { FANOUT_BATCH, fanOutEvents } from './fanout.ts';
import { signingSecrets } from './secrets.ts';

/*
 * Delivery of the webhook outbox (docs/api.md §19), at least once. Every instance polls each second
 * (first attempt within 5 s of the commit), fans new events out to their endpoints (./fanout.ts),
 * claims due attempts atomically with a short lease that it renews while a request is in flight, so the attempts of a killed instance are claimable again
 * within seconds of its death (and of a restart). The schedule is data: each planned attempt is a
 * `pending` row with `next_attempt_at`, which tests move instead of waiting.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Delays after attempts 1…6; every later one waits 2 h. */
const RETRY_DELAYS_MS = [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR];
const LATER_DELAY_MS = 2 * HOUR;
/** Retries stop this long after the event; the last attempt then stays `failed`. */
export const RETRY_WINDOW_MS = 3 * DAY;
/** An endpoint failing this long (no success in between) is disabled and the admins are told. */
export const DISABLE_AFTER_MS = 5 * DAY;
export const RETENTION_MS = 30 * DAY;
const TIMEOUT_MS = 10 * SECOND;
const LEASE_MS = 4 * SECOND;
const RENEW_EVERY_MS = 1500;
const POLL_MS = 1000;
const BATCH = 10;
const PRUNE_EVERY_MS = HOUR;

/** The wait before attempt `attempt + 1`, ±20% jitter. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_MS[attempt - 1] ?? LATER_DELAY_MS;
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** The delivery worker of one instance. */
export interface WebhookWorker {
  /** Runs one pass now (tests); resolves when its attempts are recorded. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the worker; it runs while the `webhooks` module is enabled. */
export function startWebhookWorker(ctx: AppContext, opts: { pollMs?: number } = {}): WebhookWorker {
  const workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const agents = createDeliveryAgents(ctx.config.webhooks.allowPrivate);
  const inFlight = new Set<string>();
  let stopping = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let lastPrune = 0;

  const renew = setInterval(() => {
    if (inFlight.size === 0) return;
    renewLeases(ctx.db, [...inFlight], workerId, Date.now() + LEASE_MS).catch((err: unknown) =>
      ctx.log.warn({ err }, 'webhook lease renewal failed'),
    );
  }, RENEW_EVERY_MS);
  renew.unref();

  const pass = async () => {
    if (!ctx.modules.isEnabled('webhooks')) return;
    while ((await fanOutEvents(ctx.db)) === FANOUT_BATCH && !stopping);
    for (;;) {
      const now = Date.now();
      const batch = await claimDueAttempts(ctx.db, {
        now,
        leaseUntil: now + LEASE_MS,
        workerId,
        limit: BATCH,
      });
      if (batch.length === 0) break;
      await Promise.all(batch.map((a) => attemptOne(ctx, agents, workerId, inFlight, a)));
      if (batch.length < BATCH || stopping) break;
    }
    if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      const removed = await pruneEvents(ctx.db, Date.now() - RETENTION_MS);
      if (removed > 0) ctx.log.info({ removed }, 'old webhook events removed');
    }
  };

  const run = (): Promise<void> => {
    if (running) return running;
    running = pass()
      .catch((err: unknown) => ctx.log.warn({ err }, 'webhook delivery pass failed'))
      .finally(() => {
        running = null;
        if (!stopping) {
          timer = setTimeout(run, opts.pollMs ?? POLL_MS);
          timer.unref();
        }
      });
    return running;
  };
  timer = setTimeout(run, 0);
  timer.unref();

  return {
    drain: async () => {
      await running;
      await run();
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      clearInterval(renew);
      await running;
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

async function attemptOne(
  ctx: AppContext,
  agents: DeliveryAgents,
  workerId: string,
  inFlight: Set<string>,
  a: ClaimedAttempt,
): Promise<void> {
  inFlight.add(a.id);
  const started = Date.now();
  let result: AttemptResult;
  try {
    const secrets = signingSecrets(ctx, a, started);
    if (secrets.length === 0) {
      result = { status: 'failed', responseCode: null, error: 'secret_unavailable', durationMs: 0 };
    } else {
      const outcome = await postJson(
        agents,
        a.url,
        signedHeaders(a.event_id, a.payload, secrets, new Date(started)),
        a.payload,
        TIMEOUT_MS,
      );
      const durationMs = Date.now() - started;
      result =
        'status' in outcome
          ? {
              status: outcome.status >= 200 && outcome.status < 300 ? 'delivered' : 'failed',
              responseCode: outcome.status,
              error: null,
              durationMs,
            }
          : { status: 'failed', responseCode: null, error: outcome.error, durationMs };
    }
  } finally {
    inFlight.delete(a.id);
  }
  await finish(ctx, workerId, a, result);
}

/** Records the attempt, plans the retry, and keeps the endpoint's failing mark (auto-disable). */
async function finish(
  ctx: AppContext,
  workerId: string,
  a: ClaimedAttempt,
  result: AttemptResult,
): Promise<void> {
  const now = Date.now();
  const nextAt = now + retryDelayMs(a.attempt);
  const next =
    result.status === 'failed' && nextAt <= a.event_created_at + RETRY_WINDOW_MS
      ? { id: uuidv7(), at: nextAt }
      : null;
  let disabled = false;
  await ctx.db.transaction().execute(async (trx) => {
    const mine = await recordAttempt(
      trx,
      { id: a.id, endpointId: a.endpoint_id, eventId: a.event_id, attempt: a.attempt },
      workerId,
      result,
      next,
      now,
    );
    if (!mine) return;
    if (result.status === 'delivered') {
      await markEndpointHealthy(trx, a.endpoint_id);
      return;
    }
    const since = await markEndpointFailing(trx, a.endpoint_id, now);
    if (
      since !== null &&
      now - since >= DISABLE_AFTER_MS &&
      (await disableFailingEndpoint(trx, a.endpoint_id, now))
    ) {
      disabled = true;
      await recordAudit(trx, {
        action: 'webhook.disable',
        actor: { type: 'system' },
        target: { type: 'webhook', id: a.endpoint_id },
        details: { reason: 'failing', failing_since: new Date(since).toISOString() },
      });
      for (const admin of await activeAdmins(trx)) {
        // Each admin's `locale`, else DEFAULT_LOCALE: no request caused this (API §24).
        const lang = mailLanguage(ctx.languages, admin.locale);
        const values = { app: ctx.config.appName, endpoint: a.endpoint_id, host: new URL(a.url).host };
        const message = renderAccountMail({
          to: admin.email,
          appName: ctx.config.appName,
          subject: lang.t('mail.webhook_disabled.subject'),
          paragraphs: [
            lang.t('mail.webhook_disabled.p1', values),
            lang.t('mail.webhook_disabled.p2', values),
          ],
          language: lang,
        });
        await ctx.mail.outbox.enqueue(trx, message, 'notice.webhook_disabled');
      }
    }
  });
  if (disabled) {
    ctx.mail.outbox.nudge();
    ctx.log.warn({ webhook_id: a.endpoint_id }, 'webhook endpoint disabled after 5 days of failures');
  }
  if (result.status === 'failed') {
    ctx.log.info(
      {
        webhook_id: a.endpoint_id,
        event_id: a.event_id,
        attempt: a.attempt,
        code: result.responseCode,
        error: result.error,
      },
      next ? 'webhook attempt failed; will retry' : 'webhook delivery failed; no more retries',
    );
  }
}
