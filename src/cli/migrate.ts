import { defineCommand } from './command.ts';

export const migrateCommand = defineCommand({
  name: 'migrate',
  summary: 'apply pending database migrations and exit (they also run at every start)',
  async run({ config }) {
    const { migrateToLatest, openDatabase } = await import('../platform/db/database.ts');
    const { checkConnection } = await import('../platform/db/connection-check.ts');
    const database = openDatabase(config.databaseUrl, { poolMax: 2 });
    try {
      await checkConnection(database, config.databaseUrl);
      const applied = await migrateToLatest(database.db);
      console.log(
        applied.length
          ? `applied ${applied.length} migration(s): ${applied.join(', ')}`
          : 'database is up to date',
      );
    } finally {
      await database.close();
    }
  },
});
