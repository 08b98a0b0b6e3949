import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, SqliteDriver } from 'kysely';

/*
 * Kysely's SQLite transactions start with a plain (deferred) BEGIN: the first read takes a snapshot
 * and the first write asks for the write lock later. When another process (a CLI command beside a
 * running server) commits in between, SQLite cannot upgrade the stale snapshot and answers
 * SQLITE_BUSY at once, without waiting for busy_timeout: "database is locked" for the operator.
 * BEGIN IMMEDIATE takes the write lock first, so the second writer waits its turn instead. Inside one
 * server process every query shares the one connection, so this costs that process nothing.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** Kysely's SQLite dialect whose transactions begin immediate (see above). */
export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: ConstructorParameters<typeof SqliteDialect>[0];

  constructor(config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}
