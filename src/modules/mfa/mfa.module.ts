import { defineModule } from '../../kernel/module.ts';
import { mfaEndpoints } from './mfa.routes.ts';
import { pruneMfaState } from './mfa-login.service.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    mfa: true;
  }
}

export const mfaModule = defineModule({
  name: 'mfa',
  required: false,
  description: 'Second factors: TOTP and recovery codes',
  forms: ['FULL'],
  endpoints: mfaEndpoints,
  jobs: [
    { name: 'mfa.prune', what: 'second-factor state pruning', everyMs: 10 * 60_000, run: pruneMfaState },
  ],
  preconditions: {
    // Several PostgreSQL instances must share one key; on SQLite a key file beside the database will do.
    unmet: (config, dialect) =>
      dialect === 'postgres' && config.secretsKey === null
        ? 'SECRETS_KEY must be set to enable the mfa module on PostgreSQL (every instance needs the same key; e.g. `openssl rand -base64 32`)'
        : null,
    // On SQLite without SECRETS_KEY: the key file is made (and its warning logged) at start, not at the first enrolment.
    prepare: (ctx) => {
      ctx.secrets.key();
    },
  },
});
