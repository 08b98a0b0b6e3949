import pino, {
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type LogFn,
  type Logger,
} from 'pino';
import { type LoggableRequest, loggableUrl } from './log-url.ts';

/** Paths pino blanks in every log line: credentials and token material, wherever they appear. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.new_password',
  '*.current_password',
  '*.password_hash',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.token',
  '*.smtpUrl',
  '*.databaseUrl',
  '*.databaseListenUrl',
];

/** The service logger: JSON lines, request ids, secrets redacted. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        // Never the request line as sent: the route's path with token segments as `:token` and the
        // query's parameter names only (docs/api.md §16, src/platform/log-url.ts).
        req: (req: LoggableRequest & { ip?: string }) => ({
          method: req.method,
          url: loggableUrl(req),
          ip: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}

/** What Fastify needs of a logger (its FastifyBaseLogger), spelled out so this file needs no Fastify types. */
export interface ChildCapableLogger {
  level: string;
  fatal: LogMethod;
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
  trace: LogMethod;
  silent: LogMethod;
  child(bindings: Bindings, options?: ChildLoggerOptions): ChildCapableLogger;
}

type LogMethod = LogFn;

interface LazyChild extends ChildCapableLogger {
  parent: ChildCapableLogger;
  bindings: Bindings;
  options: ChildLoggerOptions | undefined;
  made: ChildCapableLogger | undefined;
}

function real(lazy: LazyChild): ChildCapableLogger {
  if (lazy.made === undefined) lazy.made = lazy.parent.child(lazy.bindings, lazy.options);
  return lazy.made;
}

// pino's LogFn is a set of overloads; the lazy child only forwards whatever it is given.
const forward = (method: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'): LogMethod =>
  function (this: LazyChild, ...args: unknown[]) {
    (real(this)[method] as (...a: unknown[]) => void)(...args);
  } as LogMethod;

const LAZY_CHILD: Omit<LazyChild, 'parent' | 'bindings' | 'options' | 'made'> = {
  get level() {
    return real(this as LazyChild).level;
  },
  set level(value: string) {
    real(this as LazyChild).level = value;
  },
  fatal: forward('fatal'),
  error: forward('error'),
  warn: forward('warn'),
  info: forward('info'),
  debug: forward('debug'),
  trace: forward('trace'),
  silent: forward('silent'),
  child(this: LazyChild, bindings: Bindings, options?: ChildLoggerOptions) {
    return real(this).child(bindings, options);
  },
};

/**
 * Fastify's childLoggerFactory: the per-request child (bound to the request id) is made only when
 * the request logs something. Making it eagerly cost about 5 µs per request — with the redaction
 * paths, pino runs every binding through its redacting serializer — and most requests log nothing.
 */
export function lazyChildLogger(
  parent: ChildCapableLogger,
  bindings: Bindings,
  options?: ChildLoggerOptions,
): ChildCapableLogger {
  const lazy = Object.create(LAZY_CHILD) as LazyChild;
  lazy.parent = parent;
  lazy.bindings = bindings;
  // Fastify passes `{}` when the route sets nothing; pino takes a faster path without options.
  lazy.options = options && Object.keys(options).length > 0 ? options : undefined;
  lazy.made = undefined;
  return lazy;
}
