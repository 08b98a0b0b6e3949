import { CliError, defineCommand } from './command.ts';

export const backupCommand = defineCommand({
  name: 'backup',
  summary: 'copy a SQLite database to a file, consistently, while the service runs',
  details: [
    "SQLite: SQLite's online backup API makes one consistent copy (the WAL included) without",
    'stopping the service; the copy is checked before it takes the name <file>. The copy holds the',
    'signing keys and every stored secret: keep it as safe as the database (docs/operations.md).',
    'PostgreSQL: use pg_dump (docs/operations.md, "Backups"); this command says so and exits 1.',
  ].join('\n'),
  positionals: [{ name: 'file', description: 'where the copy goes (refused if it exists)', required: true }],
  options: {
    force: { type: 'boolean', description: 'replace <file> if it exists' },
  },
  async run({ config, positionals, values }) {
    const target = positionals[0] ?? '';
    const url = config.databaseUrl;
    if (!url.startsWith('sqlite:')) {
      throw new CliError(
        'backup copies SQLite databases; for PostgreSQL run pg_dump --format=custom --file <file> "$DATABASE_URL" (docs/operations.md, "Backups")',
      );
    }
    const { BackupError, backupSqlite } = await import('../platform/db/backup.ts');
    try {
      const result = await backupSqlite(url.slice('sqlite:'.length), target, values.force === true);
      const key = result.keyFile
        ? `, and the generated secrets key to ${result.keyFile} (restore both together)`
        : '';
      console.log(
        `backed up to ${target} (${result.bytes} bytes, ${result.migrations} migrations applied)${key}; it holds the signing keys and stored secrets: keep it safe`,
      );
    } catch (err) {
      if (err instanceof BackupError) throw new CliError(`backup failed: ${err.message}`);
      throw err;
    }
  },
});
