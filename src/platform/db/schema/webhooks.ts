// The webhooks' tables (src/modules/webhooks/); their event outbox is the identity core's. Part of schema.ts (the one `DB`).

/** Every table Kysely knows about. */
/** docs/api.md §19: where events go. `events` is a JSON array of types (or `["*"]`). */
export interface WebhookEndpointsTable {
  id: string;
  url: string;
  description: string;
  events: string;
  enabled: number;
  /** The signing secret (`whsec_…`), sealed with SECRETS_KEY. */
  secret_box: string;
  /** After a rotation: the previous secret, signing too until `previous_secret_until`. */
  previous_secret_box: string | null;
  previous_secret_until: number | null;
  /** The first failed attempt since the last success; null while deliveries succeed. */
  failing_since: number | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

/** The webhook outbox: one event, written in the transaction of the change it reports. */
export interface WebhookEventsTable {
  id: string;
  type: string;
  /** The JSON body sent to every endpoint. */
  payload: string;
  created_at: number;
  /** 1 until the delivery worker has planned its first attempt to each subscribed endpoint. */
  fanout_pending: number;
}

/** One attempt (planned or made) of one event to one endpoint. */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  status: 'pending' | 'delivered' | 'failed';
  response_code: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: number;
  next_attempt_at: number | null;
  locked_until: number | null;
  locked_by: string | null;
}
