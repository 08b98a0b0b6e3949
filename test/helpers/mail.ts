import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { buildTestApp, type TestApp } from './app.ts';
import type { TestDialect } from './databases.ts';

/**
 * A test app in the `full` form that sends its mail to a local SMTP server, failed deliveries
 * retried a second apart (so a test sees the retry); `env` adds to that. `t.destroy()` stops the
 * server too.
 */
export async function buildMailTestApp(
  dialect: TestDialect,
  env: Record<string, string> = {},
): Promise<{ t: TestApp; smtp: SmtpHarness }> {
  const smtp = await startSmtpServer();
  try {
    const t = await buildTestApp(dialect, {
      env: { API_FORM: 'full', SMTP_URL: smtp.url, MAIL_RETRY_BASE_S: '1', ...env },
    });
    const destroy = async () => {
      await t.destroy();
      await smtp.stop();
    };
    return { smtp, t: { ...t, destroy } };
  } catch (err) {
    await smtp.stop();
    throw err;
  }
}
