import { CliError, defineCommand } from './command.ts';
import { withContext } from './database.ts';

/*
 * `gatehouse webhooks list|add|enable|remove` (docs/webhooks.md): the admin API's endpoint
 * management for an operator at the console, through the same service functions (the same URL
 * checks, the same sealed secret).
 */

/** The CLI acts as the system (docs/operations.md, audit entries). */
const SYSTEM = { actor: { type: 'system' as const }, client: null };

const idOption = {
  id: { type: 'string', value: 'id', description: 'the endpoint', required: true },
} as const;

export const webhooksListCommand = defineCommand({
  name: 'webhooks list',
  summary: 'list the webhook endpoints (id, enabled, url, events)',
  async run({ config }) {
    await withContext(config, async (ctx) => {
      const { listWebhooks } = await import('../modules/webhooks/index.ts');
      const { data } = await listWebhooks(ctx);
      if (data.length === 0) console.log('no webhook endpoints');
      for (const w of data) {
        console.log(`${w.id}  ${w.enabled ? 'enabled ' : 'disabled'}  ${w.url}  ${w.events.join(',')}`);
      }
    });
  },
});

export const webhooksAddCommand = defineCommand({
  name: 'webhooks add',
  summary: 'add a webhook endpoint and print its signing secret (shown this once)',
  options: {
    url: { type: 'string', value: 'url', description: 'where events are POSTed (https)', required: true },
    events: { type: 'string', value: 'types', description: 'comma list of event types, or * (default *)' },
    description: { type: 'string', value: 'text', description: 'a note for admins' },
  },
  async run({ values, config }) {
    const { WEBHOOK_EVENT_TYPES } = await import('../identity/index.ts');
    const events = (values.events ?? '*')
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    const known = new Set<string>([...WEBHOOK_EVENT_TYPES, '*']);
    const unknown = events.filter((e) => !known.has(e));
    if (events.length === 0 || unknown.length > 0) {
      throw new CliError(
        `unknown event type(s): ${unknown.join(', ') || '(none given)'}; see docs/webhooks.md`,
      );
    }
    await withContext(config, async (ctx) => {
      const { createWebhook } = await import('../modules/webhooks/index.ts');
      const created = await createWebhook(
        ctx,
        {
          url: String(values.url),
          events: events as Parameters<typeof createWebhook>[1]['events'],
          ...(values.description !== undefined && { description: values.description }),
        },
        SYSTEM,
      );
      console.log(`added ${created.id} ${created.url}`);
      console.log(`secret ${created.secret}`);
    });
  },
});

export const webhooksEnableCommand = defineCommand({
  name: 'webhooks enable',
  summary: 'enable a webhook endpoint again (after its auto-disable); waiting attempts go out',
  options: idOption,
  async run({ values, config }) {
    await withContext(config, async (ctx) => {
      const { updateWebhook } = await import('../modules/webhooks/index.ts');
      const w = await updateWebhook(ctx, String(values.id), { enabled: true }, SYSTEM);
      console.log(`enabled ${w.id} ${w.url}`);
    });
  },
});

export const webhooksRemoveCommand = defineCommand({
  name: 'webhooks remove',
  summary: 'remove a webhook endpoint and its delivery log',
  options: idOption,
  async run({ values, config }) {
    await withContext(config, async (ctx) => {
      const { deleteWebhook } = await import('../modules/webhooks/index.ts');
      await deleteWebhook(ctx, String(values.id), SYSTEM);
      console.log(`removed ${values.id}`);
    });
  },
});
