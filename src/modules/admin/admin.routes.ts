import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo, recordAudit } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import { quoted } from '../../platform/quoted.ts';
import { requestActor } from '../audit/index.ts';
import { checkFactorModuleOff } from '../mfa/index.ts';
import { checkPasswordlessOff } from '../passwordless/index.ts';
import { checkProvidersOff } from '../providers/index.ts';
import { ModuleList, ModuleObject, ModuleParams, ToggleBody } from './admin.schemas.ts';

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
        if (module.required && !req.body.enabled) {
          throw new ApiError('module_required', {
            detail: `The ${module.name} module is required and cannot be disabled`,
          });
        }
        const unavailable = req.body.enabled && !module.enabled ? modules.unavailable(module.name) : null;
        if (unavailable !== null) throw new ApiError('module_unavailable', { detail: unavailable });
        const force = req.body.force === true;
        await ctx.modules.set(module.name, req.body.enabled, async (trx) => {
          // docs/api.md §16: switching off a factor's module that accounts use is refused (409
          // module_in_use) unless forced, and even then while no admin could sign in afterwards.
          const holders = req.body.enabled
            ? 0
            : (await checkFactorModuleOff(ctx, trx, module.name, force)) +
              (await checkProvidersOff(ctx, trx, module.name, force));
          // The same rule for accounts whose only way in is an e-mail link or code.
          const emailOnly = req.body.enabled ? 0 : await checkPasswordlessOff(ctx, trx, module.name, force);
          await recordAudit(trx, {
            action: 'module.toggle',
            actor: requestActor(req),
            target: { type: 'module', id: module.name },
            client: clientInfo(req),
            details: {
              enabled: req.body.enabled,
              previous: module.enabled,
              ...(holders > 0 && { force, accounts_with_factors: holders }),
              ...(emailOnly > 0 && { force, accounts_signing_in_only_by_email: emailOnly }),
            },
          });
        });
        return describe(module.name);
      },
    }),
  ];
}
