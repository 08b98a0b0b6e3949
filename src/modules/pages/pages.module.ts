import { defineModule } from '../../kernel/module.ts';
import { pagesEndpoints } from './pages.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    pages: true;
  }
}

/** Pages are not in the index (docs/api.md §15), so they can be on in every form. */
export const pagesModule = defineModule({
  name: 'pages',
  required: false,
  description: 'Hosted sign-in and account pages',
  forms: ['A', 'B', 'FULL'],
  endpoints: pagesEndpoints,
});
