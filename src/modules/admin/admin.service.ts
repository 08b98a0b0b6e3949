import { type AuditEvent, recordAudit } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';
import { checkFactorModuleOff } from '../mfa/index.ts';
import { checkPasswordlessOff } from '../passwordless/index.ts';
import { checkProvidersOff } from '../providers/index.ts';
import { checkSsoNeeds } from '../sso/index.ts';

/** A module as the switch sees it: the catalog's facts and its state now. */
export interface SwitchedModule {
  name: ModuleName;
  required: boolean;
  enabled: boolean;
}

/**
 * Switches a module on or off (docs/api.md §8, §16): the one implementation behind
 * `PUT /api/v1/admin/modules/<name>` and `gatehouse modules enable|disable`. A required module
 * refuses (409 `module_required`), a module whose preconditions are unmet refuses to come on (409
 * `module_unavailable`, `unavailable` says why), switching off a factor's module that accounts use
 * is refused unless forced (409 `module_in_use`); the change and its `module.toggle` audit entry
 * commit together.
 */
export async function switchModule(
  ctx: AppContext,
  module: SwitchedModule,
  enabled: boolean,
  options: {
    force: boolean;
    unavailable: string | null;
    actor: AuditEvent['actor'];
    client: AuditEvent['client'];
  },
): Promise<void> {
  if (module.required && !enabled) {
    throw new ApiError('module_required', {
      detail: `The ${module.name} module is required and cannot be disabled`,
    });
  }
  if (enabled && !module.enabled && options.unavailable !== null) {
    throw new ApiError('module_unavailable', { detail: options.unavailable });
  }
  const { force } = options;
  // docs/api.md §23: sso needs providers and organizations (a forced switch-off takes sso along).
  const ssoToo = checkSsoNeeds(ctx, module.name, enabled, force);
  await ctx.modules.set(module.name, enabled, async (trx) => {
    // docs/api.md §16: switching off a factor's module that accounts use is refused (409
    // module_in_use) unless forced, and even then while no admin could sign in afterwards.
    const holders = enabled
      ? 0
      : (await checkFactorModuleOff(ctx, trx, module.name, force)) +
        (await checkProvidersOff(ctx, trx, module.name, force));
    // The same rule for accounts whose only way in is an e-mail link or code.
    const emailOnly = enabled ? 0 : await checkPasswordlessOff(ctx, trx, module.name, force);
    await recordAudit(trx, {
      action: 'module.toggle',
      actor: options.actor,
      target: { type: 'module', id: module.name },
      client: options.client,
      details: {
        enabled,
        previous: module.enabled,
        ...(holders > 0 && { force, accounts_with_factors: holders }),
        ...(emailOnly > 0 && { force, accounts_signing_in_only_by_email: emailOnly }),
      },
    });
  });
  if (ssoToo) {
    await ctx.modules.set('sso', false, (trx) =>
      recordAudit(trx, {
        action: 'module.toggle',
        actor: options.actor,
        target: { type: 'module', id: 'sso' },
        client: options.client,
        details: { enabled: false, previous: true, force, because: module.name },
      }),
    );
  }
}
