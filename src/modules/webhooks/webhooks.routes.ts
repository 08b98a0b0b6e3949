import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { requestActor } from '../audit/index.ts';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryPage,
  DeliveryParams,
  DeliverySchema,
  UpdateWebhookBody,
  WebhookList,
  WebhookParams,
  WebhookSchema,
  WebhookWithSecret,
} from './webhooks.schemas.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  retryDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  webhookDeliveries,
} from './webhooks.service.ts';

const by = (req: Parameters<typeof requestActor>[0] & Parameters<typeof clientInfo>[0]) => ({
  actor: requestActor(req),
  client: clientInfo(req),
});

/** The webhooks module (docs/api.md §19): admins manage endpoints and read their delivery logs. */
export function webhookEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'webhooks',
      label: 'list',
      method: 'GET',
      path: '/api/v1/webhooks',
      access: 'admin',
      summary: 'Webhook endpoints',
      schema: { response: { 200: WebhookList } },
      handler: () => listWebhooks(ctx),
    }),
    endpoint({
      group: 'webhooks',
      label: 'create',
      method: 'POST',
      path: '/api/v1/webhooks',
      access: 'admin',
      summary: 'Add a webhook endpoint (its secret is in this answer only)',
      issuesTokens: true,
      schema: { body: CreateWebhookBody, response: { 201: WebhookWithSecret } },
      status: 201,
      location: (created) => `/api/v1/webhooks/${created.id}`,
      handler: (req) => createWebhook(ctx, req.body, by(req)),
    }),
    endpoint({
      group: 'webhooks',
      label: 'get',
      method: 'GET',
      path: '/api/v1/webhooks/:id',
      access: 'admin',
      summary: 'A webhook endpoint',
      schema: { params: WebhookParams, response: { 200: WebhookSchema } },
      handler: (req) => getWebhook(ctx, req.params.id),
    }),
    endpoint({
      group: 'webhooks',
      label: 'update',
      method: 'PUT',
      path: '/api/v1/webhooks/:id',
      access: 'admin',
      summary: 'Change a webhook endpoint (url, events, enabled, description)',
      schema: { params: WebhookParams, body: UpdateWebhookBody, response: { 200: WebhookSchema } },
      handler: (req) => updateWebhook(ctx, req.params.id, req.body, by(req)),
    }),
    endpoint({
      group: 'webhooks',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/webhooks/:id',
      access: 'admin',
      summary: 'Remove a webhook endpoint and its delivery log',
      schema: { params: WebhookParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await deleteWebhook(ctx, req.params.id, by(req));
      },
    }),
    endpoint({
      group: 'webhooks',
      label: 'secret',
      method: 'POST',
      path: '/api/v1/webhooks/:id/secret',
      access: 'admin',
      summary: 'Rotate the signing secret (the old one also signs for 24 h)',
      issuesTokens: true,
      schema: { params: WebhookParams, response: { 200: WebhookWithSecret } },
      handler: (req) => rotateWebhookSecret(ctx, req.params.id, by(req)),
    }),
    endpoint({
      group: 'webhooks',
      label: 'deliveries',
      method: 'GET',
      path: '/api/v1/webhooks/:id/deliveries',
      access: 'admin',
      summary: 'Delivery log of an endpoint, newest first',
      schema: { params: WebhookParams, querystring: DeliveriesQuery, response: { 200: DeliveryPage } },
      handler: (req) => webhookDeliveries(ctx, req.params.id, req.query.limit, req.query.cursor),
    }),
    endpoint({
      group: 'webhooks',
      label: 'retry',
      method: 'POST',
      path: '/api/v1/webhooks/:id/deliveries/:delivery_id/retry',
      access: 'admin',
      summary: 'Deliver that event again now (same webhook-id)',
      schema: { params: DeliveryParams, response: { 202: DeliverySchema } },
      status: 202,
      handler: (req) => retryDelivery(ctx, req.params.id, req.params.delivery_id),
    }),
    endpoint({
      group: 'webhooks',
      label: 'test',
      method: 'POST',
      path: '/api/v1/webhooks/:id/test',
      access: 'admin',
      summary: 'Send a webhook.test event to this endpoint',
      schema: { params: WebhookParams, response: { 202: DeliverySchema } },
      status: 202,
      handler: (req) => testWebhook(ctx, req.params.id, requireAuth(req).user.id),
    }),
  ];
}
