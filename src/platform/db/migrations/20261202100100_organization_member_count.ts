import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.ts';

/**
 * `organizations.member_count` kept by triggers on `organization_members`, in the transaction of
 * every change to it — the module's own adds and removals, and the rows a user's deletion removes
 * by cascade (the identity core deletes users and knows nothing of organizations). So the count
 * never drifts, whatever removes a membership.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements =
    dialectOf(db) === 'postgres'
      ? [
          `create function organization_members_count() returns trigger language plpgsql as $$
           begin
             if tg_op = 'INSERT' then
               update organizations set member_count = member_count + 1 where id = new.organization_id;
               return new;
             end if;
             update organizations set member_count = member_count - 1 where id = old.organization_id;
             return old;
           end $$`,
          `create trigger organization_members_count_ai after insert on organization_members
           for each row execute function organization_members_count()`,
          `create trigger organization_members_count_ad after delete on organization_members
           for each row execute function organization_members_count()`,
        ]
      : [
          `create trigger organization_members_count_ai after insert on organization_members begin
             update organizations set member_count = member_count + 1 where id = new.organization_id;
           end`,
          `create trigger organization_members_count_ad after delete on organization_members begin
             update organizations set member_count = member_count - 1 where id = old.organization_id;
           end`,
        ];
  for (const s of statements) await sql.raw(s).execute(db);
}

/** Drops the triggers. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`drop trigger if exists organization_members_count_ai on organization_members`.execute(db);
    await sql`drop trigger if exists organization_members_count_ad on organization_members`.execute(db);
    await sql`drop function if exists organization_members_count()`.execute(db);
  } else {
    await sql`drop trigger if exists organization_members_count_ai`.execute(db);
    await sql`drop trigger if exists organization_members_count_ad`.execute(db);
  }
}
