import { once } from 'node:events';
import { createReadStream, statSync } from 'node:fs';
import { quoted } from '../platform/quoted.ts';
import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

export const usersImportCommand = defineCommand({
  name: 'users import',
  summary: 'import users from JSONL or CSV (bcrypt, argon2 and scrypt hashes accepted)',
  details: 'The format follows the file name (.jsonl, .csv) unless --format says it; - reads stdin.',
  options: {
    format: { type: 'string', value: 'jsonl|csv', description: 'the input format' },
    'dry-run': { type: 'boolean', description: 'validate and report, write nothing' },
  },
  positionals: [{ name: 'file', description: 'the file to import, or - for stdin', required: true }],
  async run({ values, positionals, config }) {
    const { formatFor, readRecords, TransferFileError } = await import('../modules/users/index.ts');
    const { ImportFailedError, importUsers } = await import('../modules/users/index.ts');
    const file = positionals[0] ?? '-';
    let format: ReturnType<typeof formatFor>;
    try {
      format = formatFor(file === '-' ? '' : file, values.format);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    if (file !== '-') checkReadable(file);
    const input = file === '-' ? process.stdin : createReadStream(file);
    const dryRun = values['dry-run'] === true;
    await withDatabase(config, async ({ db }) => {
      try {
        const summary = await importUsers(db, readRecords(input, format), {
          dryRun,
          onProblem: (p) =>
            console.error(`line ${p.line}: ${p.kind === 'invalid' ? 'invalid' : 'skipped'}: ${p.reason}`),
        });
        console.log(
          `${dryRun ? 'dry run: would import' : 'imported'} ${summary.imported} user(s) from ${summary.read} record(s); ` +
            `${summary.duplicates} duplicate(s) and ${summary.invalid} invalid row(s) skipped`,
        );
      } catch (err) {
        if (err instanceof TransferFileError) throw new CliError(err.message);
        if (err instanceof ImportFailedError) {
          throw new CliError(
            `import stopped by a database error after ${err.summary.imported} user(s) were imported: ${err.message}`,
          );
        }
        throw err;
      }
    });
  },
});

function checkReadable(file: string): void {
  try {
    if (!statSync(file).isFile()) throw new CliError(`${file} is not a file`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'error');
    throw new CliError(`cannot read ${file}: ${why}`);
  }
}

export const usersExportCommand = defineCommand({
  name: 'users export',
  summary: 'write every user to stdout as JSONL (or CSV), password hashes included',
  options: {
    format: { type: 'string', value: 'jsonl|csv', description: 'the output format (default jsonl)' },
  },
  async run({ values, config }) {
    const { exportUsers } = await import('../modules/users/index.ts');
    const format = values.format ?? 'jsonl';
    if (format !== 'jsonl' && format !== 'csv')
      throw new CliError(`unknown format ${quoted(format)}: use jsonl or csv`);
    console.error('gatehouse: warning: the export holds password hashes; store and move it like a secret');
    // A reader that stops early (`| head`) closes the pipe: stop quietly rather than crash on EPIPE.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
    await withDatabase(config, async ({ db }) => {
      const n = await exportUsers(db, format, async (text) => {
        if (text !== '' && !process.stdout.write(text)) await once(process.stdout, 'drain');
      });
      console.error(`gatehouse: exported ${n} user(s)`);
    });
  },
});
