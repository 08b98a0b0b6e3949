import { createServer } from 'node:net';
import { type Config, type Env, readEnvFile } from '../platform/config.ts';
import { CliError, defineCommand } from './command.ts';

export const serveCommand = defineCommand({
  name: 'serve',
  summary: 'run the service (the default command; `npm start`)',
  details:
    "Checks each enabled module's needs, that PORT is free on HOST, that no other serve holds the\n" +
    'SQLite file (it locks <database>.lock while it runs) and that the database answers; then applies\n' +
    'pending migrations, creates the first admin on an empty database and listens. SIGTERM or SIGINT\n' +
    'stops it gracefully.',
  async run({ config, env }) {
    // Before the database is opened: a port clash must not leave a freshly migrated database and a
    // printed one-time admin password behind it.
    await assertPortFree(config.port, config.host);
    // One serving process per SQLite file: a second one would start and refuse every token of the
    // first (each keeps its own caches); it is refused here, before it opens the database.
    const { acquireServeLock, ServeLockError } = await import('../platform/db/serve-lock.ts');
    let releaseLock: () => void;
    try {
      releaseLock = acquireServeLock(config.databaseUrl);
    } catch (err) {
      throw err instanceof ServeLockError ? new CliError(err.message) : err;
    }
    try {
      await serve(config, env, releaseLock);
    } catch (err) {
      releaseLock();
      throw err;
    }
  },
});

/** Starts the service and listens; `releaseLock` runs after a graceful stop. */
async function serve(config: Config, env: Env, releaseLock: () => void): Promise<void> {
  const { createLogger } = await import('../platform/logger.ts');
  const { lowerWorkerPriority } = await import('../platform/worker-priority.ts');
  const log = createLogger(config.logLevel);
  // A key of .env that is no setting is most often a typo whose setting silently keeps its default.
  const { unknownSettings } = await import('../platform/config/names.ts');
  for (const { name, nearest } of unknownSettings(Object.keys(readEnvFile()), env)) {
    log.warn(
      { variable: name, ...(nearest ? { did_you_mean: nearest } : {}) },
      `.env sets ${name}, which is not a Gatehouse setting and is ignored${nearest ? ` (did you mean ${nearest}?)` : ''}`,
    );
  }
  // Loaded here, not at the top: the web stack is the slow part of starting, and the other
  // commands (import, export, migrate) do not need it.
  const { startService, readyLine } = await import('../kernel/server.ts');
  const { default: closeWithGrace } = await import('close-with-grace');
  const service = await startService(config, log);
  // Its own messages (a second signal, the 10 s timeout) go to the JSON log, not the console.
  const logger = {
    error: (message: unknown) =>
      message instanceof Error ? log.error({ err: message }, 'shutdown failed') : log.error(String(message)),
  };
  closeWithGrace({ delay: 10_000, logger }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an uncaught error');
    else log.info({ signal }, 'shutting down');
    // app.close() stops accepting, lets in-flight requests finish, then the database closes.
    await service.close();
    releaseLock();
  });
  const reniced = await lowerWorkerPriority(config.workerNice).catch((err: unknown) => {
    log.warn({ err }, 'could not lower the priority of the hashing threads');
    return 0;
  });
  if (reniced > 0)
    log.info({ threads: reniced, nice: config.workerNice }, 'hashing threads yield to requests');
  // Fastify logs one line per address it listens on (every interface on 0.0.0.0), each a socket
  // address that may not be where the pages work: the first becomes the one line that names the
  // address people use (PUBLIC_URL) and the console; any others stay technical.
  let first = true;
  const listenTextResolver = (address: string) => {
    if (!first) return `also listening on ${address}`;
    first = false;
    return readyLine(service.ctx, address);
  };
  try {
    await service.app.listen({ port: config.port, host: config.host, listenTextResolver });
  } catch (err) {
    // Taken between the check and now: still named plainly, and the database closed cleanly.
    await service.close();
    throw listenError(err, config.port, config.host) ?? err;
  }
}

/** Binds PORT on HOST for a moment; a clash or a refusal is a one-line CliError naming both. */
export async function assertPortFree(port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err) => reject(listenError(err, port, host) ?? err));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

function listenError(err: unknown, port: number, host: string): CliError | null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new CliError(
      `port ${port} on ${host} is already in use (EADDRINUSE: another Gatehouse?); set PORT to a free port`,
    );
  }
  if (code === 'EACCES')
    return new CliError(`not allowed to listen on port ${port} on ${host} (EACCES); set PORT above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new CliError(`cannot listen on ${host}: not an address of this machine; check HOST`);
  }
  return null;
}
