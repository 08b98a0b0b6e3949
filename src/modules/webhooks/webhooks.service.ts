import { v7 as uuidv7 } from 'uuid';
import type { ClientInfo } from '../../identity/index.ts';
import { type AuditActor, insertBareEvent, recordAudit } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { urlProblem } from '../../platform/outbound/address-guard.ts';
import { newWebhookSecret } from '../../platform/outbound/standard-webhooks.ts';
import { insertPendingAttempt } from './delivery.queries.ts';
import { sealSecret } from './secrets.ts';
import {
  type DeliveryRow,
  deleteEndpoint,
  type EndpointRow,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  lastAttemptNumber,
  listDeliveries,
  listEndpoints,
  pendingAttemptOf,
  updateEndpoint,
} from './webhooks.queries.ts';
import type {
  CreateWebhookInput,
  PublicDelivery,
  PublicWebhook,
  PublicWebhookWithSecret,
  UpdateWebhookInput,
} from './webhooks.schemas.ts';

/** Who makes a change (an admin through the API, or the system from the CLI), for its audit entry. */
export interface ChangedBy {
  actor: AuditActor;
  client: ClientInfo | null;
}

/** After a rotation the previous secret signs too, this long (docs/api.md §19). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const iso = (ms: number) => new Date(ms).toISOString();
const notFound = () => new ApiError('webhook_not_found', { detail: 'No such webhook endpoint' });

function toPublic(row: EndpointRow): PublicWebhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled === 1,
    disabled_reason: row.enabled === 1 ? null : row.disabled_reason === 'failing' ? 'failing' : 'admin',
    description: row.description,
    created_at: iso(row.created_at),
  };
}

function toPublicDelivery(row: DeliveryRow): PublicDelivery {
  return {
    id: row.id,
    event_id: row.event_id,
    type: row.type,
    attempt: row.attempt,
    status: row.status,
    response_code: row.response_code,
    error: row.error,
    duration_ms: row.duration_ms,
    created_at: iso(row.created_at),
    next_attempt_at: row.next_attempt_at === null ? null : iso(row.next_attempt_at),
  };
}

/** 400 `validation_failed` at /url when the address may not be an endpoint (docs/api.md §19, "No SSRF"). */
function checkUrl(ctx: AppContext, url: string): string {
  const problem = urlProblem(url, ctx.config.webhooks);
  if (problem !== null) {
    throw new ApiError('validation_failed', {
      detail: `url ${problem}`,
      errors: [{ path: '/url', message: problem }],
    });
  }
  return new URL(url).href;
}

/** `["*"]` stands alone: a list naming every type besides it says the same thing twice. */
function normalEvents(events: readonly string[]): string[] {
  return events.includes('*') ? ['*'] : [...events];
}

async function endpointOr404(ctx: AppContext, id: string): Promise<EndpointRow> {
  const row = UUID.test(id) ? await findEndpoint(ctx.db, id) : undefined;
  if (!row) throw notFound();
  return row;
}

/** GET /api/v1/webhooks. */
export async function listWebhooks(ctx: AppContext): Promise<{ data: PublicWebhook[] }> {
  return { data: (await listEndpoints(ctx.db)).map(toPublic) };
}

/** GET /api/v1/webhooks/<id>. */
export async function getWebhook(ctx: AppContext, id: string): Promise<PublicWebhook> {
  return toPublic(await endpointOr404(ctx, id));
}

/** POST /api/v1/webhooks: the secret is in this answer only. */
export async function createWebhook(
  ctx: AppContext,
  body: CreateWebhookInput,
  by: ChangedBy,
): Promise<PublicWebhookWithSecret> {
  const url = checkUrl(ctx, body.url);
  const id = uuidv7();
  const secret = newWebhookSecret();
  const now = Date.now();
  const row: EndpointRow = {
    id,
    url,
    description: body.description ?? '',
    events: JSON.stringify(normalEvents(body.events)),
    enabled: body.enabled === false ? 0 : 1,
    secret_box: sealSecret(ctx, id, secret),
    previous_secret_box: null,
    previous_secret_until: null,
    failing_since: null,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await insertEndpoint(trx, row);
    await recordAudit(trx, {
      action: 'webhook.create',
      actor: by.actor,
      target: { type: 'webhook', id },
      client: by.client,
      details: { url, events: JSON.parse(row.events), enabled: row.enabled === 1 },
    });
  });
  return { ...toPublic(row), secret };
}

/** PUT /api/v1/webhooks/<id>: partial; enabling again clears the failing mark. */
export async function updateWebhook(
  ctx: AppContext,
  id: string,
  body: UpdateWebhookInput,
  by: ChangedBy,
): Promise<PublicWebhook> {
  const before = await endpointOr404(ctx, id);
  const patch: Partial<EndpointRow> = { updated_at: Date.now() };
  if (body.url !== undefined) patch.url = checkUrl(ctx, body.url);
  if (body.events !== undefined) patch.events = JSON.stringify(normalEvents(body.events));
  if (body.description !== undefined) patch.description = body.description;
  if (body.enabled !== undefined) {
    patch.enabled = body.enabled ? 1 : 0;
    if (body.enabled && before.enabled === 0)
      Object.assign(patch, { failing_since: null, disabled_reason: null });
    if (!body.enabled) patch.disabled_reason = 'admin';
  }
  await ctx.db.transaction().execute(async (trx) => {
    await updateEndpoint(trx, id, patch);
    await recordAudit(trx, {
      action: 'webhook.update',
      actor: by.actor,
      target: { type: 'webhook', id },
      client: by.client,
      details: { fields: Object.keys(body), ...(patch.url !== undefined && { url: patch.url }) },
    });
  });
  return toPublic({ ...before, ...patch });
}

/** DELETE /api/v1/webhooks/<id>: the endpoint and its delivery log. */
export async function deleteWebhook(ctx: AppContext, id: string, by: ChangedBy): Promise<void> {
  if (!UUID.test(id)) throw notFound();
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteEndpoint(trx, id))) throw notFound();
    await recordAudit(trx, {
      action: 'webhook.delete',
      actor: by.actor,
      target: { type: 'webhook', id },
      client: by.client,
    });
  });
}

/** POST /api/v1/webhooks/<id>/secret: a new secret; the previous one signs too for 24 h. */
export async function rotateWebhookSecret(
  ctx: AppContext,
  id: string,
  by: ChangedBy,
): Promise<PublicWebhookWithSecret> {
  const before = await endpointOr404(ctx, id);
  const secret = newWebhookSecret();
  const now = Date.now();
  await ctx.db.transaction().execute(async (trx) => {
    await updateEndpoint(trx, id, {
      secret_box: sealSecret(ctx, id, secret),
      previous_secret_box: before.secret_box,
      previous_secret_until: now + ROTATION_OVERLAP_MS,
      updated_at: now,
    });
    await recordAudit(trx, {
      action: 'webhook.secret_rotate',
      actor: by.actor,
      target: { type: 'webhook', id },
      client: by.client,
    });
  });
  return { ...toPublic(before), secret };
}

/** GET /api/v1/webhooks/<id>/deliveries: attempts newest first, keyset-paged. */
export async function webhookDeliveries(
  ctx: AppContext,
  id: string,
  limit: number,
  cursor: string | undefined,
): Promise<{ data: PublicDelivery[]; next_cursor: string | null }> {
  await endpointOr404(ctx, id);
  let before: string | null = null;
  if (cursor !== undefined) {
    before = Buffer.from(cursor, 'base64url').toString('latin1');
    if (!UUID.test(before) || Buffer.from(before).toString('base64url') !== cursor) {
      throw new ApiError('validation_failed', {
        detail: 'cursor is not a cursor this endpoint returned',
        errors: [{ path: '/cursor', message: 'is not valid' }],
      });
    }
  }
  const rows = await listDeliveries(ctx.db, id, limit + 1, before);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(toPublicDelivery),
    next_cursor: rows.length > limit && last ? Buffer.from(last.id).toString('base64url') : null,
  };
}

/**
 * POST …/deliveries/<delivery_id>/retry: plans a new attempt of that event now (the same
 * `webhook-id`). When one is already planned, that one is answered instead of a second.
 */
export async function retryDelivery(
  ctx: AppContext,
  id: string,
  deliveryId: string,
): Promise<PublicDelivery> {
  await endpointOr404(ctx, id);
  const row = UUID.test(deliveryId) ? await findDelivery(ctx.db, id, deliveryId) : undefined;
  if (!row) throw new ApiError('not_found', { detail: 'No such delivery of this webhook endpoint' });
  const planned = await ctx.db.transaction().execute(async (trx) => {
    const pending = await pendingAttemptOf(trx, id, row.event_id);
    if (pending) return pending.id;
    const now = Date.now();
    const newId = uuidv7();
    const attempt = (await lastAttemptNumber(trx, id, row.event_id)) + 1;
    await insertPendingAttempt(
      trx,
      { id: newId, at: now, endpointId: id, eventId: row.event_id },
      attempt,
      now,
    );
    return newId;
  });
  return toPublicDelivery((await findDelivery(ctx.db, id, planned)) as DeliveryRow);
}

/** POST /api/v1/webhooks/<id>/test: a `webhook.test` event to this endpoint only. */
export async function testWebhook(ctx: AppContext, id: string, adminId: string): Promise<PublicDelivery> {
  const endpoint = await endpointOr404(ctx, id);
  const now = Date.now();
  const eventId = uuidv7();
  const deliveryId = uuidv7();
  const body = {
    type: 'webhook.test',
    timestamp: iso(now),
    data: { webhook: { id: endpoint.id }, actor: { type: 'admin', id: adminId } },
  };
  await ctx.db.transaction().execute(async (trx) => {
    await insertBareEvent(trx, {
      id: eventId,
      type: 'webhook.test',
      payload: JSON.stringify(body),
      created_at: now,
    });
    await insertPendingAttempt(trx, { id: deliveryId, at: now, endpointId: id, eventId }, 1, now);
  });
  return toPublicDelivery((await findDelivery(ctx.db, id, deliveryId)) as DeliveryRow);
}
