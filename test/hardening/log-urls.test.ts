import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { MODULE_NAMES } from '../../src/kernel/registry.ts';
import { loggableUrl, recordedRoutes, recordRoutes } from '../../src/platform/log-url.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

/*
 * docs/api.md §16 "No token in a log line": at trace level, every route with a path parameter is
 * called with a recognizable token in each parameter and in the query string, with every method
 * (so the 405s too) and with a trailing slash (a 404); the token must appear in no log line. The
 * routes come from the app itself (its onRoute record, src/platform/log-url.ts), not from a hand list, so a
 * route added later is swept without anyone remembering.
 */

// Shaped like Gatehouse's link tokens (43 characters of base64url) so it passes the routes' schemas.
const TOKEN = 'LeAkEdToKeN_0123456789abcdefghijKLMNOPQRSTU';
const QUERY = `?token=${TOKEN}&code=${TOKEN}&${TOKEN}`;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function withParams(pattern: string, value: string): string {
  return pattern
    .split('/')
    .map((s) => (s.startsWith(':') || s === '*' ? value : s))
    .join('/');
}

for (const dialect of DIALECTS) {
  describe(`no token in a log line: every route with a parameter [${dialect}]`, () => {
    let t: TestApp;
    const lines: string[] = [];
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full', LOG_LEVEL: 'trace' }, logLines: lines });
      for (const name of MODULE_NAMES) await t.ctx.modules.set(name, true);
    });
    after(async () => {
      await t?.destroy();
    });

    it('sweeps every parametric route, every method, matched and unmatched, at trace', async () => {
      const routes = recordedRoutes(t.app).filter((r) => r.includes(':') || r.includes('*'));
      // The sweep covers the token routes of today (a sanity floor, not the list swept).
      for (const known of [
        '/account/invitation/:token',
        '/account/reset-password/:token',
        '/account/verify-email/:token',
        '/api/v1/invite/:token',
        '/api/v1/invite/:token/set-password',
        '/api/v1/password/reset/:token',
        '/api/v1/email/verify/:token',
      ])
        assert.ok(routes.includes(known), `${known} is recorded`);
      const headers = {
        ...(await authHeaders(t, await firstAdmin(t))),
        'content-type': 'application/json',
      };
      let calls = 0;
      for (const route of routes) {
        const path = withParams(route, TOKEN);
        for (const url of [`${path}${QUERY}`, `${path}/${QUERY}`]) {
          for (const method of METHODS) {
            const withBody = method !== 'GET' && method !== 'DELETE';
            const before = lines.length;
            await t.app.inject({
              method,
              url,
              headers: { ...headers, 'x-request-id': `sweep-${calls}` },
              ...(withBody ? { payload: '{}' } : {}),
            });
            calls++;
            const mine = lines.slice(before).filter((l) => l.includes(`"sweep-${calls - 1}"`));
            assert.ok(mine.length > 0, `${method} ${route} logged its request`);
          }
        }
      }
      assert.ok(calls >= routes.length * 10);
      const leaked = lines.filter((l) => l.includes(TOKEN) || l.includes(TOKEN.slice(0, 20)));
      assert.deepEqual(leaked, [], 'a token reached the log');
    });

    it('writes the route with :token and the query as parameter names only', async () => {
      const before = lines.length;
      await t.app.inject({ url: `/account/reset-password/${TOKEN}?token=${TOKEN}&lang=en` });
      await t.app.inject({ method: 'GET', url: `/api/v1/password/reset/${TOKEN}/` });
      await t.app.inject({ method: 'PUT', url: `/api/v1/invite/${TOKEN}/set-password` });
      const admin = await firstAdmin(t);
      await t.app.inject({ url: `/api/v1/users/${admin.id}`, headers: await authHeaders(t, admin) });
      const urls = lines
        .slice(before)
        .map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } })
        .filter((l) => l.msg === 'request completed')
        .map((l) => l.req?.url);
      assert.deepEqual(urls, [
        '/account/reset-password/:token?token&lang',
        // A 404 (trailing slash) and a 405 (wrong method) keep only plain words and UUIDs.
        '/api/v1/password/reset/:token/',
        '/api/v1/invite/:token/set-password',
        `/api/v1/users/${admin.id}`,
      ]);
    });
  });
}

describe('no token in a log line: routes added later (wildcards, provider callbacks)', () => {
  it('covers /oauth2/* and /api/v1/idp/:name/callback without naming them', async () => {
    const lines: string[] = [];
    const app = Fastify({
      loggerInstance: createLogger('trace', {
        write: (l: string) => void lines.push(l),
      }) as FastifyBaseLogger,
    });
    recordRoutes(app);
    app.get('/oauth2/*', async () => 'ok');
    app.get('/api/v1/idp/:name/callback', async () => 'ok');
    app.get('/api/v1/things/:code', async () => 'ok');
    // Fastify's default 404 handler logs the request line in its message; Gatehouse replaces it
    // (src/http/errors.ts installErrorHandlers), and so does this app.
    app.setNotFoundHandler((_request, reply) => reply.code(404).send());
    await app.ready();
    const uid = 'Zq3xVbN7kP0wLmR2sT5yU';
    for (const url of [
      `/oauth2/interaction/${uid}?state=${TOKEN}`,
      `/oauth2/token`,
      `/api/v1/idp/google/callback?code=${TOKEN}&state=${TOKEN}&iss=x`,
      `/api/v1/things/${TOKEN}`,
      `/not/a/route/${TOKEN}?${TOKEN}`,
    ])
      await app.inject({ url });
    await app.close();
    const urls = lines
      .map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } })
      // Fastify's own request logging (on here, off in Gatehouse) goes through the same serializer.
      .filter((l) => l.msg === 'incoming request')
      .map((l) => l.req?.url);
    assert.deepEqual(urls, [
      '/oauth2/interaction/:token?state',
      '/oauth2/token',
      '/api/v1/idp/google/callback?code&state&iss',
      '/api/v1/things/:token',
      '/not/a/route/:token',
    ]);
    assert.ok(!lines.join('\n').includes(uid));
    assert.deepEqual(
      lines.filter((l) => l.includes(TOKEN)),
      [],
    );
    // A bare IncomingMessage-like object (no route at all) follows the same rule.
    assert.equal(loggableUrl({ url: `/x/${TOKEN}?a=${TOKEN}` }), '/x/:token?a');
  });
});
