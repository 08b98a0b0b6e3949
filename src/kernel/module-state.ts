import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { ApiForm } from '../platform/config.ts';
import { dialectOf } from '../platform/db/dialect.ts';
import { startListener } from '../platform/db/notifications.ts';
import type { DB } from '../platform/db/schema.ts';
import type { ModuleName } from './module-names.ts';
import { notify, readModuleOverrides, upsertModuleOverride } from './module-state.queries.ts';

/** The PostgreSQL channel a module toggle is announced on (payload: the module's name). */
export const MODULES_CHANNEL = 'gatehouse_modules';

// The names are declared by the modules (module-names.ts); the state only needs them as a type.
export type { ModuleName };

/** What the state needs of a module: its name, whether it is required, the forms it starts on in. */
export interface ModuleInfo {
  name: ModuleName;
  required: boolean;
  /** Forms in which the module starts enabled (required modules: always). */
  forms: readonly ApiForm[];
}

/** A module's public description, as the admin module list and the index show it. */
export type ModuleCatalog = Array<{
  name: ModuleName;
  required: boolean;
  description: string;
  endpoints: string[];
  /** The index groups of its listed endpoints (API key scopes derive from them, docs/api.md §22). */
  groups: string[];
}>;

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

/**
 * Builds the state for a form and loads the stored overrides once. `announce` (PostgreSQL): every
 * toggle also sends NOTIFY on MODULES_CHANNEL, in the toggle's own transaction.
 */
export async function createModuleState(
  db: Kysely<DB>,
  form: ApiForm,
  modules: readonly ModuleInfo[],
  options: { announce?: boolean } = {},
): Promise<ModuleState> {
  const defaults = new Map(modules.map((m) => [m.name, m.required || m.forms.includes(form)]));
  const required = new Set(modules.filter((m) => m.required).map((m) => m.name));
  const announce = options.announce === true && dialectOf(db) === 'postgres';
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
    apply(await readModuleOverrides(db));
  };
  await refresh();

  return {
    isEnabled: (name) => current.get(name) === true,
    snapshot: () => Object.fromEntries(current) as Record<ModuleName, boolean>,
    async set(name, enabled, alongside) {
      const now = Date.now();
      await db.transaction().execute(async (trx) => {
        await upsertModuleOverride(trx, name, enabled, now);
        await alongside?.(trx);
        // Delivered on commit only, so no instance hears of a toggle that was rolled back.
        if (announce) await notify(trx, MODULES_CHANNEL, name);
      });
      await refresh();
    },
    refresh,
    onChange: (listener) => {
      listeners.push(listener);
    },
  };
}

/**
 * PostgreSQL: re-reads the module state whenever any instance announces a toggle, and after every
 * reconnect of the LISTEN connection (announcements made while it was down are lost). Bursts are
 * coalesced into one re-read at a time. Returns the stop function (for `ctx.closers`).
 */
export function followModuleNotifications(
  state: ModuleState,
  listenUrl: string,
  log: Logger,
): () => Promise<void> {
  let running = false;
  let again = false;
  const refreshSoon = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    (async () => {
      do {
        again = false;
        await state.refresh().catch((err: unknown) => log.warn({ err }, 'module state refresh failed'));
      } while (again);
      running = false;
    })();
  };
  const listener = startListener({
    connectionString: listenUrl,
    channel: MODULES_CHANNEL,
    onNotification: refreshSoon,
    onConnect: refreshSoon,
    log,
  });
  return () => listener.stop();
}
