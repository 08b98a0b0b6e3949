import { type Static, Type } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES } from '../../identity/index.ts';

const EventName = Type.Union([...WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)), Type.Literal('*')]);
const Events = Type.Array(EventName, { minItems: 1, maxItems: 50, uniqueItems: true });
const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Description = Type.String({ maxLength: 500, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });

/** An endpoint as the API shows it (docs/api.md §19): never its secret. */
export const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  /**
   * Why a disabled endpoint is off: an admin turned it off, or its deliveries had failed for 5 days
   * (auto-disable). null while enabled. The console's notice reads it (docs/console.md).
   */
  disabled_reason: Type.Union([Type.Literal('admin'), Type.Literal('failing'), Type.Null()]),
  description: Type.String(),
  created_at: Type.String(),
});
export type PublicWebhook = Static<typeof WebhookSchema>;

/** Create and rotate answers: the endpoint with its new secret, shown this once. */
export const WebhookWithSecret = Type.Intersect([WebhookSchema, Type.Object({ secret: Type.String() })]);
export type PublicWebhookWithSecret = Static<typeof WebhookWithSecret>;

export const WebhookList = Type.Object({ data: Type.Array(WebhookSchema) });

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  delivery_id: Type.String({ maxLength: 64 }),
});
export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

const Nullable = <T extends ReturnType<typeof Type.Integer | typeof Type.String>>(t: T) =>
  Type.Union([t, Type.Null()]);

/** One attempt in the delivery log. */
export const DeliverySchema = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  type: Type.String(),
  attempt: Type.Integer(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  response_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  duration_ms: Nullable(Type.Integer()),
  created_at: Type.String(),
  next_attempt_at: Nullable(Type.String()),
});
export type PublicDelivery = Static<typeof DeliverySchema>;

export const DeliveryPage = Type.Object({
  data: Type.Array(DeliverySchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
