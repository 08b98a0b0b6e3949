import { type Kysely, sql } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

const PURPOSES_BEFORE = `'password_reset', 'email_verify', 'email_change', 'email_signin'`;
const PURPOSES = `'password_reset', 'email_verify', 'email_change', 'email_signin', 'invitation'`;
const LINK_COLUMNS =
  'id, user_id, purpose, token_hash, email, created_at, expires_at, used_at, replaced_at, code_hash, code_tries';

/**
 * Invitations keep their token in the one table of mailed one-time links (docs/invitations.md): a
 * row of purpose `invitation` holds the token's SHA-256, the invited address, the expiry and the
 * used/replaced marks, as every link does. `invitations` keeps only what is the invitation's own —
 * the role it grants and who sent it — one row per link, under the link's id (so an invitation's
 * id, in answers and audit entries, is unchanged).
 *
 * Every invitation moves, pending or not, with its state (`consumed_at` becomes `used_at`): a token
 * mailed before the upgrade keeps working, an old used or expired one keeps its 410, and the newest
 * invitation still hands its role and inviter to a re-sent one. The purpose CHECK gains
 * `invitation`; SQLite cannot alter a CHECK, so there the links table is rebuilt (before anything
 * references it), on PostgreSQL the constraint is replaced.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await setPurposes(db, PURPOSES);
  await sql
    .raw(
      `insert into one_time_links (${LINK_COLUMNS})
       select id, user_id, 'invitation', token_hash, email, created_at, expires_at, consumed_at, replaced_at, null, 0
       from invitations`,
    )
    .execute(db);
  await db.schema
    .createTable('invitations_next')
    .addColumn('id', 'text', (c) => c.primaryKey().references('one_time_links.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('invited_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await sql`insert into invitations_next (id, role, invited_by) select id, role, invited_by from invitations`.execute(
    db,
  );
  await db.schema.dropTable('invitations').execute();
  await sql`alter table invitations_next rename to invitations`.execute(db);
}

/** Back to invitations holding their own tokens; the invitation links leave the links table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('invitations_prev')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('consumed_at', ts)
    .addColumn('replaced_at', ts)
    .execute();
  await sql`insert into invitations_prev (id, user_id, email, role, token_hash, invited_by, created_at, expires_at, consumed_at, replaced_at)
    select l.id, l.user_id, l.email, i.role, l.token_hash, i.invited_by, l.created_at, l.expires_at, l.used_at, l.replaced_at
    from invitations i join one_time_links l on l.id = i.id`.execute(db);
  await db.schema.dropTable('invitations').execute();
  await sql`alter table invitations_prev rename to invitations`.execute(db);
  await db.schema.createIndex('invitations_user_id_idx').on('invitations').column('user_id').execute();
  await sql`delete from one_time_links where purpose = 'invitation'`.execute(db);
  await setPurposes(db, PURPOSES_BEFORE);
}

/** The purpose CHECK: replaced on PostgreSQL; on SQLite a new table, the rows copied, swapped in. */
async function setPurposes(db: Kysely<unknown>, purposes: string): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`alter table one_time_links drop constraint if exists one_time_links_purpose_check`.execute(db);
    await sql
      .raw(
        `alter table one_time_links add constraint one_time_links_purpose_check check (purpose in (${purposes}))`,
      )
      .execute(db);
    return;
  }
  const ts = bigintType('sqlite');
  await db.schema
    .createTable('one_time_links_next')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql.raw(`purpose in (${purposes})`)))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .addColumn('replaced_at', ts)
    .addColumn('code_hash', 'text')
    .addColumn('code_tries', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql
    .raw(`insert into one_time_links_next (${LINK_COLUMNS}) select ${LINK_COLUMNS} from one_time_links`)
    .execute(db);
  await db.schema.dropTable('one_time_links').execute();
  await sql`alter table one_time_links_next rename to one_time_links`.execute(db);
  await db.schema
    .createIndex('one_time_links_user_idx')
    .on('one_time_links')
    .columns(['user_id', 'purpose'])
    .execute();
}
