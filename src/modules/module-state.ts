import type { Kysely, Transaction } from 'kysely';
import type { ApiForm } from '../config.ts';
import type { DB } from '../db/schema.ts';

/** The modules of API.md §2, in that order. Later optional modules are appended and start disabled. */
export const MODULE_NAMES = [
  'core',
  'health',
  'admin',
  'auth',
  'users',
  'account',
  'user_admin',
  'idp',
  'invitations',
  'audit',
] as const;

export type ModuleName = (typeof MODULE_NAMES)[number];

/** What the registry says about a module, apart from its endpoints. */
export interface ModuleInfo {
  name: ModuleName;
  required: boolean;
  description: string;
  /** Forms in which the module starts enabled (required modules: always). */
  enabledIn: readonly ApiForm[];
}

/**
 * Run-time enabled state: the form's defaults with the overrides stored in `module_overrides` on
 * top. Reads are synchronous (hot path); `refresh()` re-reads the overrides so toggles made by
 * other instances arrive (polled, and pushed on PostgreSQL where LISTEN/NOTIFY is wired).
 */
export interface ModuleState {
  isEnabled(name: ModuleName): boolean;
  snapshot(): Record<ModuleName, boolean>;
  /** Stores an override; `alongside` runs in the same transaction (the audit entry of the toggle). */
  set(name: ModuleName, enabled: boolean, alongside?: (trx: Transaction<DB>) => Promise<void>): Promise<void>;
  refresh(): Promise<void>;
  /** Called after every change seen (local or remote). */
  onChange(listener: () => void): void;
}

/** Builds the state for a form and loads the stored overrides once. */
export async function createModuleState(
  db: Kysely<DB>,
  form: ApiForm,
  modules: readonly ModuleInfo[],
): Promise<ModuleState> {
  const defaults = new Map(modules.map((m) => [m.name, m.required || m.enabledIn.includes(form)]));
  const required = new Set(modules.filter((m) => m.required).map((m) => m.name));
  let current = new Map(defaults);
  const listeners: Array<() => void> = [];

  const apply = (overrides: Array<{ name: string; enabled: number }>) => {
    const next = new Map(defaults);
    for (const o of overrides) {
      if (next.has(o.name as ModuleName) && !required.has(o.name as ModuleName)) {
        next.set(o.name as ModuleName, o.enabled === 1);
      }
    }
    const changed = [...next].some(([name, on]) => current.get(name) !== on);
    current = next;
    if (changed) for (const l of listeners) l();
  };

  const refresh = async () => {
    apply(await db.selectFrom('module_overrides').select(['name', 'enabled']).execute());
  };
  await refresh();

  return {
    isEnabled: (name) => current.get(name) === true,
    snapshot: () => Object.fromEntries(current) as Record<ModuleName, boolean>,
    async set(name, enabled, alongside) {
      const now = Date.now();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('module_overrides')
          .values({ name, enabled: enabled ? 1 : 0, updated_at: now })
          .onConflict((oc) => oc.column('name').doUpdateSet({ enabled: enabled ? 1 : 0, updated_at: now }))
          .execute();
        await alongside?.(trx);
      });
      await refresh();
    },
    refresh,
    onChange: (listener) => {
      listeners.push(listener);
    },
  };
}
