import { defineModule } from '../../kernel/module.ts';
import { webhookEndpoints } from './webhooks.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    webhooks: true;
  }
}

export const webhooksModule = defineModule({
  name: 'webhooks',
  required: false,
  description: 'Signed webhooks for account events',
  forms: ['FULL'],
  // The delivery worker is not a job: it is started and stopped with the mail outbox in src/kernel/server.ts.
  endpoints: webhookEndpoints,
  preconditions: {
    // docs/api.md §10: endpoint secrets are sealed with the key every instance shares.
    unmet: (config, dialect) =>
      dialect === 'postgres' && config.secretsKey === null
        ? 'SECRETS_KEY must be set to enable the webhooks module on PostgreSQL (every instance needs the same key; e.g. `openssl rand -base64 32`)'
        : null,
  },
});
