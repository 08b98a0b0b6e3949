import { type Kysely, sql } from 'kysely';

/*
 * Records how each account came to be (docs/api.md §16, "Linking by e-mail is safe"): an unknown
 * provider identity may link by e-mail to an unverified account only when an operator created it
 * and so vouches for its address. Values: `signup`, `admin`, `invitation`, `idp`, `import`,
 * `first_admin`, and `unknown` for rows whose origin this migration cannot establish.
 *
 * New rows always name their origin (newUserRow in src/identity/users.queries.ts requires it);
 * the column's default, `unknown`, is the fail-safe one: an `unknown` account is treated like a
 * self-signed-up one (never linked by e-mail while its address is unproven).
 *
 * Backfill of existing rows, most certain evidence first:
 *   1. a successful `user.signup` audit entry for the user → `signup`;
 *   2. its `user.create` audit entry names the path (`via`): `idp`, `cli.users_import` → `import`,
 *      `api` → `admin`, `bootstrap`/`cli.create_admin`/`bench` → `first_admin`;
 *   3. an invitation row for the user → `invitation` (invitations are only issued to new accounts);
 *   4. what is left (its audit entry pruned, or made before the audit trail existed) → `admin`,
 *      unless public sign-up may ever have run on this database — the `registration` module has a
 *      stored toggle, or any `user.signup` entry exists — in which case it stays `unknown`.
 * Why not simply `admin` for all: `admin` vouches for the address, so labelling a self-signed-up
 * account `admin` would leave this very hole open for accounts squatted before the upgrade. Without
 * sign-up ever enabled, no stranger could have created an account, so `admin` is then both true
 * (every other creating path is an operator's or proves the address) and keeps form A's managed,
 * unverified accounts linking as before. `unknown` costs only convenience: such an account links
 * once its address is verified, or an operator links it (`gatehouse users link-identity`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('created_via', 'text', (c) => c.notNull().defaultTo('unknown'))
    .execute();
  await sql`update users set created_via = 'signup' where exists (
      select 1 from audit_log a
      where a.target_id = users.id and a.action = 'user.signup' and a.outcome = 'success')`.execute(db);
  const byVia: Array<[string, string[]]> = [
    ['idp', ['idp']],
    ['import', ['cli.users_import']],
    ['admin', ['api']],
    ['first_admin', ['bootstrap', 'cli.create_admin', 'bench']],
  ];
  for (const [origin, vias] of byVia) {
    for (const via of vias) {
      // details is JSON.stringify output (no spaces), so the member is matched exactly.
      const member = `%"via":"${via}"%`;
      await sql`update users set created_via = ${origin} where created_via = 'unknown' and exists (
          select 1 from audit_log a
          where a.target_id = users.id and a.action = 'user.create' and a.details like ${member})`.execute(
        db,
      );
    }
  }
  await sql`update users set created_via = 'invitation' where created_via = 'unknown' and exists (
      select 1 from invitations i where i.user_id = users.id)`.execute(db);
  await sql`update users set created_via = 'admin' where created_via = 'unknown'
      and not exists (select 1 from module_overrides m where m.name = 'registration')
      and not exists (select 1 from audit_log a where a.action = 'user.signup')`.execute(db);
}

/** Drops the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('created_via').execute();
}
