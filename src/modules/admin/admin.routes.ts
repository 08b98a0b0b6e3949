import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import { quoted } from '../../platform/quoted.ts';
import { requestActor } from '../audit/index.ts';
import { ModuleList, ModuleObject, ModuleParams, ToggleBody } from './admin.schemas.ts';
import { switchModule } from './admin.service.ts';

/** admin.modules and admin.module_toggle (docs/api.md §8). The catalog is the registry's own derivation. */
export function adminEndpoints(ctx: AppContext, modules: ModuleDirectory): Endpoint[] {
  const describe = (name: string) => {
    const entry = modules.catalog().find((m) => m.name === name);
    if (!entry) throw new ApiError('not_found', { detail: `There is no module named ${quoted(name)}` });
    return { ...entry, enabled: ctx.modules.isEnabled(entry.name) };
  };
  return [
    endpoint({
      group: 'admin',
      label: 'modules',
      method: 'GET',
      path: '/api/v1/admin/modules',
      access: 'admin',
      summary: 'List the modules with their state and endpoints',
      schema: { response: { 200: ModuleList } },
      handler: () => ({ data: modules.catalog().map((m) => describe(m.name)) }),
    }),
    endpoint({
      group: 'admin',
      label: 'module_toggle',
      method: 'PUT',
      path: '/api/v1/admin/modules/:name',
      access: 'admin',
      summary: 'Enable or disable an optional module at run time',
      schema: { params: ModuleParams, body: ToggleBody, response: { 200: ModuleObject } },
      handler: async (req) => {
        const module = describe(req.params.name);
        await switchModule(ctx, module, req.body.enabled, {
          force: req.body.force === true,
          unavailable: req.body.enabled && !module.enabled ? modules.unavailable(module.name) : null,
          actor: requestActor(req),
          client: clientInfo(req),
        });
        return describe(module.name);
      },
    }),
  ];
}
