import { randomBytes } from 'node:crypto';
import { type Compilable, CompiledQuery, type Kysely, type QueryResult, type Transaction } from 'kysely';
import type { DB } from './schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Where one parameter of the compiled SQL comes from: a field of the call's values, or the query itself. */
type Slot = { field: string } | { constant: unknown };

interface Plan {
  sql: string;
  slots: Slot[];
  fieldCount: number;
}

/**
 * A query that Kysely builds and compiles once per database engine; each call then binds its own
 * values to the same SQL. Building and compiling through Kysely's builders took as long as SQLite
 * took to run the login's statements (docs/benchmarks.md, "Login"), and their text never changes.
 *
 * `build` is called once, with a stand-in for each field of the first call's values, and must use
 * every field as a plain value (`where(col, '=', p.x)`, `values({ col: p.x })`, `set({ col: p.x })`):
 * not in a condition (`p.x === null ? … : …`: the SQL is fixed by the first call), not transformed
 * (`JSON.stringify(p.x)`, `` `${p.x}` ``). A stand-in that went missing, was transformed or reached
 * the SQL text throws when the query is first compiled; a call whose fields differ from the first
 * call's, or that passes `undefined` (Kysely would drop the column), throws every time.
 */
export function preparedQuery<P extends Record<string, unknown>, R>(
  build: (db: Db, values: P) => Compilable<R>,
): PreparedQuery<P, R> {
  // Kysely keeps one adapter per instance; a transaction shares its instance's adapter.
  const plans = new WeakMap<object, Plan>();
  const compile = (db: Db, values: P): CompiledQuery<R> => {
    const adapter = db.getExecutor().adapter;
    let plan = plans.get(adapter);
    if (plan === undefined) {
      plan = compilePlan(db, build, Object.keys(values));
      plans.set(adapter, plan);
    }
    return CompiledQuery.raw(plan.sql, bind(plan, values)) as CompiledQuery<R>;
  };
  const run = (db: Db, values: P) => db.executeQuery<R>(compile(db, values));
  return Object.assign(run, { compile });
}

/** Runs the query; `compile` gives its SQL and bound values without running it (SQLite's synchronous reads). */
export interface PreparedQuery<P, R> {
  (db: Db, values: P): Promise<QueryResult<R>>;
  compile(db: Db, values: P): CompiledQuery<R>;
}

function bind(plan: Plan, values: Record<string, unknown>): unknown[] {
  let fields = 0;
  for (const _ in values) fields++;
  if (fields !== plan.fieldCount)
    throw new TypeError('prepared query called with other fields than it was built for');
  const bound = new Array<unknown>(plan.slots.length);
  for (let i = 0; i < plan.slots.length; i++) {
    const slot = plan.slots[i] as Slot;
    if ('field' in slot) {
      const value = values[slot.field];
      if (value === undefined)
        throw new TypeError(`prepared query field ${slot.field} is undefined (use null)`);
      bound[i] = value;
    } else {
      bound[i] = slot.constant;
    }
  }
  return bound;
}

function compilePlan<P extends Record<string, unknown>, R>(
  db: Db,
  build: (db: Db, values: P) => Compilable<R>,
  fields: string[],
): Plan {
  const nonce = randomBytes(9).toString('base64url');
  const standIn = (field: string) => `\u0000${nonce}:${field}\u0000`;
  const byStandIn = new Map(fields.map((field) => [standIn(field), field]));
  const compiled = build(db, Object.fromEntries(fields.map((f) => [f, standIn(f)])) as P).compile();
  if (compiled.sql.includes(nonce)) throw new Error('prepared query: a value reached the SQL text');
  const used = new Set<string>();
  const slots = compiled.parameters.map((parameter): Slot => {
    const field = typeof parameter === 'string' ? byStandIn.get(parameter) : undefined;
    if (field !== undefined) {
      used.add(field);
      return { field };
    }
    if (typeof parameter === 'string' && parameter.includes(nonce))
      throw new Error('prepared query: a value was transformed inside the builder');
    return { constant: parameter };
  });
  const unused = fields.filter((f) => !used.has(f));
  if (unused.length > 0) throw new Error(`prepared query: unused field(s) ${unused.join(', ')}`);
  return { sql: compiled.sql, slots, fieldCount: fields.length };
}
