import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/*
 * Standard Webhooks signatures (docs/api.md §19), made by the `standardwebhooks` package itself so
 * a receiver verifying with it (or any conforming library) accepts every attempt.
 */

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, the form the package reads. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The three headers of one attempt; during a rotation both secrets sign (`v1,<old> v1,<new>`). */
export function signedHeaders(
  eventId: string,
  body: string,
  secrets: readonly string[],
  at: Date = new Date(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(eventId, at, body)).join(' '),
  };
}
