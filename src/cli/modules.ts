import type { Config } from '../platform/config.ts';
import { CliError, defineCommand } from './command.ts';
import { withContext } from './database.ts';

/*
 * `gatehouse modules list|enable|disable` (README, "Modules"): the admin API's module switches for an
 * operator at the shell, through the same function (admin's switchModule: the same refusals, the same
 * `module.toggle` audit entry, actor `system`). It is also the way back when `console` or `pages`
 * was switched off from the console itself. Running instances on the same database follow within
 * seconds, as after the API's switch.
 */

async function toggle(config: Config, name: string, enabled: boolean, force: boolean): Promise<void> {
  const { findModule, MODULE_NAMES } = await import('../kernel/registry.ts');
  const module = findModule(name);
  if (module === undefined) {
    throw new CliError(`there is no module named "${name}"; the modules: ${MODULE_NAMES.join(', ')}`);
  }
  await withContext(config, async (ctx) => {
    const { switchModule } = await import('../modules/admin/index.ts');
    const before = ctx.modules.isEnabled(module.name);
    const state = enabled ? 'on' : 'off';
    if (before === enabled) {
      // Nothing changes, so nothing is audited.
      console.log(`${module.name} was already ${state}`);
      return;
    }
    await switchModule(ctx, { name: module.name, required: module.required, enabled: before }, enabled, {
      force,
      unavailable: module.preconditions?.unmet(ctx.config, ctx.database.dialect) ?? null,
      actor: { type: 'system' },
      client: null,
    });
    console.log(`${module.name} is ${state}`);
  });
}

const nameArg = [{ name: 'module', description: 'a module name (gatehouse modules list)', required: true }];

export const modulesListCommand = defineCommand({
  name: 'modules list',
  summary: 'list the modules: name, on or off, required, description',
  async run({ config }) {
    const { MODULES } = await import('../kernel/registry.ts');
    await withContext(config, async (ctx) => {
      const width = Math.max(...MODULES.map((m) => m.name.length));
      for (const m of MODULES) {
        const state = ctx.modules.isEnabled(m.name) ? 'on ' : 'off';
        console.log(
          `${m.name.padEnd(width)}  ${state}  ${m.required ? 'required' : 'optional'}  ${m.description}`,
        );
      }
    });
  },
});

export const modulesEnableCommand = defineCommand({
  name: 'modules enable',
  summary: 'switch an optional module on (stored in the database, like the admin API’s switch)',
  positionals: nameArg,
  async run({ positionals, config }) {
    await toggle(config, positionals[0] as string, true, false);
  },
});

export const modulesDisableCommand = defineCommand({
  name: 'modules disable',
  summary: 'switch an optional module off; --force when accounts still use its factors',
  positionals: nameArg,
  options: {
    force: {
      type: 'boolean',
      description: 'switch off mfa, passkeys, providers or passwordless although accounts use them',
    },
  },
  async run({ positionals, values, config }) {
    await toggle(config, positionals[0] as string, false, values.force === true);
  },
});
