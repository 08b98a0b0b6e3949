import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { SMTPServer } from 'smtp-server';
import { parseMail } from './mime-parser.ts';

/** A message as the test SMTP server received it. */
export interface ReceivedMail {
  /** SMTP envelope: MAIL FROM and RCPT TO addresses. */
  envelope: { from: string; to: string[] };
  /** The user that authenticated for this session, null without AUTH. */
  user: string | null;
  /** The raw message exactly as received (UTF-8 decoded), for asserting on the wire format. */
  raw: string;
  /** Lower-cased header names, decoded values (first occurrence). */
  headers: Record<string, string>;
  from: string;
  to: string;
  subject: string;
  /** Decoded text/plain body with LF line ends; null when the message has none. */
  text: string | null;
  /** Decoded text/html body with LF line ends; null when the message has none. */
  html: string | null;
}

export interface SmtpHarness {
  /** `smtp://user:pass@127.0.0.1:port` (credentials percent-encoded), or without them when no auth. */
  url: string;
  port: number;
  /** Every message received since creation, in arrival order; survives stop/start. */
  messages: ReceivedMail[];
  /** Resolves with the messages once at least `count` arrived; rejects after `timeoutMs` (5 s). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Stops listening and drops open sessions; connecting afterwards is refused. */
  stop(): Promise<void>;
  /** Listens again on the same port after stop(). */
  start(): Promise<void>;
}

export interface SmtpHarnessOptions {
  /** Port on 127.0.0.1; 0 or absent picks a free one (kept for restarts). */
  port?: number;
  /** When given, AUTH (PLAIN/LOGIN) is required and only these credentials pass. */
  auth?: { user: string; pass: string };
  /** When given, TLS from the first byte (smtps://) with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
}

/** Starts a real SMTP server on loopback (plain text, or TLS with `tls`) that records what it receives. */
export async function startSmtpServer(opts: SmtpHarnessOptions = {}): Promise<SmtpHarness> {
  const auth = opts.auth;
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let server: SMTPServer | null = null;
  let port = opts.port ?? 0;

  const onData = (
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (err?: Error | null) => void,
  ) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', (err: Error) => callback(err));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks);
      let parsed: ReturnType<typeof parseMail>;
      try {
        parsed = parseMail(raw);
      } catch (err) {
        // Refuse what we cannot read, so the test sees a failed send rather than a silent gap.
        callback(new Error(`test harness could not parse the message: ${(err as Error).message}`));
        return;
      }
      const envelope = session.envelope;
      messages.push({
        envelope: {
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((r) => r.address),
        },
        user: typeof session.user === 'string' ? session.user : null,
        raw: raw.toString('utf8'),
        headers: parsed.headers,
        from: parsed.headers.from ?? '',
        to: parsed.headers.to ?? '',
        subject: parsed.headers.subject ?? '',
        text: parsed.text,
        html: parsed.html,
      });
      callback();
      for (const wake of waiters) wake();
    });
  };

  const listen = async (): Promise<void> => {
    const instance = new SMTPServer({
      secure: opts.tls !== undefined,
      ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
      disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      authOptional: !auth,
      authMethods: ['PLAIN', 'LOGIN'],
      // Loopback without TLS is the whole point of this harness.
      allowInsecureAuth: true,
      disableReverseLookup: true,
      logger: false,
      banner: 'gatehouse test smtp',
      // Sessions still open at stop() are dropped quickly instead of after 30 s.
      closeTimeout: 100,
      onAuth(credentials, _session, callback) {
        if (auth && credentials.username === auth.user && credentials.password === auth.pass) {
          callback(null, { user: credentials.username });
          return;
        }
        callback(new Error('Invalid username or password'));
      },
      onData,
    });
    // A client that refuses the certificate drops the TLS handshake; the server reports that as
    // an 'error' event, which would crash the test process without a listener. The client's
    // side is what tests assert on.
    instance.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      instance.server.once('error', reject);
      instance.listen(port, '127.0.0.1', () => {
        instance.server.off('error', reject);
        resolve();
      });
    });
    const address = instance.server.address();
    if (address === null || typeof address === 'string') throw new Error('SMTP harness has no TCP address');
    port = address.port;
    server = instance;
  };

  await listen();
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';

  return {
    url: `${opts.tls ? 'smtps' : 'smtp'}://${credentials}127.0.0.1:${port}`,
    port,
    messages,
    waitFor(count, timeoutMs = 5_000) {
      if (messages.length >= count) return Promise.resolve(messages.slice());
      return new Promise((resolve, reject) => {
        const wake = () => {
          if (messages.length < count) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(messages.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`SMTP harness: expected ${count} message(s), got ${messages.length}`));
        }, timeoutMs);
        waiters.add(wake);
      });
    },
    async stop() {
      const current = server;
      server = null;
      if (!current) return;
      await new Promise<void>((resolve) => current.close(() => resolve()));
    },
    async start() {
      if (server) return;
      await listen();
    },
  };
}
