import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from '../helpers/app.ts';
import type { TestDialect } from '../helpers/databases.ts';
import { freePort } from '../support/service-process.ts';

/** A Gatehouse app listening on localhost (PUBLIC_URL is that address: passkeys need a name), `full` form: oauth on. */
export interface OauthStack {
  t: TestApp;
  origin: string;
  admin(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startOauthApp(
  dialect: TestDialect,
  env: Record<string, string> = {},
): Promise<OauthStack> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const t = await buildTestApp(dialect, { env: { API_FORM: 'full', PUBLIC_URL: origin, ...env } });
  await t.app.listen({ port, host: 'localhost' });
  let token: string | null = null;
  const admin = async (method: string, path: string, body?: unknown) => {
    if (token === null) {
      const res = await fetch(`${origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
      });
      token = ((await res.json()) as { access_token: string }).access_token;
    }
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  return { t, origin, admin, close: () => t.destroy() };
}
