import { defineModule } from '../../kernel/module.ts';
import { sessionEndpoints } from './sessions.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    sessions: true;
  }
}

export const sessionsModule = defineModule({
  name: 'sessions',
  required: false,
  description: 'Session lists and revocation',
  forms: ['FULL'],
  endpoints: sessionEndpoints,
});
