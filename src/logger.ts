import pino, { type DestinationStream, type Logger } from 'pino';

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

/** Hides secrets that travel in paths (invitation tokens) before a URL is logged. */
export function redactPath(url: string): string {
  return url.replace(/(\/invite\/)[^/?#]+/g, '$1[redacted]');
}

/** The service logger: JSON lines, request ids, secrets redacted. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method: string; url: string; ip?: string; id?: string }) => ({
          method: req.method,
          url: redactPath(req.url),
          ip: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}
