import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/platform/config.ts';
import { buildTestApp, json, type TestApp, testEnv } from '../helpers/app.ts';
import { runEntry } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';
import {
  type AnswerMode,
  HOOK_SECRET,
  type HookReceiver,
  hookEnv,
  jwtPayload,
  startHookReceiver,
} from './receiver.ts';

/*
 * The claims hook on Gatehouse's own tokens (docs/api.md §21, docs/claims-hook.md): a real receiver
 * (test/hook/receiver.ts, the documented example in examples/claims-hook/) verifying every call with
 * the `standardwebhooks` package; login and refresh, every failure kind under `deny` (503
 * `token_hook_failed`, nothing issued, nothing consumed, the login throttle not counting it) and
 * under `allow` (the token without extras, a warning logged), and the start refusing bad settings.
 */

const PASSWORD = 'a long and unguessable passphrase 7';
const HOOK_TIMEOUT_MS = 1000;

/** Every way to answer badly, and why it is one (docs/api.md §21). */
const FAILURES: Array<[string, AnswerMode]> = [
  ['a non-2xx answer', { status: 500, body: '{"claims":{"plan":"pro"}}' }],
  ['a redirect (never followed)', { status: 307, body: '' }],
  ['an empty body', { status: 200, body: '' }],
  ['a body that is not JSON', { status: 200, body: 'plan=pro' }],
  ['a JSON array', { status: 200, body: '[{"plan":"pro"}]' }],
  ['`claims` that is not an object', { status: 200, body: '{"claims":["plan"]}' }],
  ['a reserved claim (sub)', { status: 200, body: '{"claims":{"sub":"someone-else"}}' }],
  ['a reserved claim (roles)', { status: 200, body: '{"claims":{"roles":["owner"]}}' }],
  ['a claim Gatehouse already signs (role)', { status: 200, body: '{"claims":{"role":"admin"}}' }],
  ['an answer over 4 KiB', { status: 200, body: JSON.stringify({ claims: { blob: 'x'.repeat(4100) } }) }],
  ['a timeout', { status: 200, body: '{"claims":{"plan":"pro"}}', delayMs: HOOK_TIMEOUT_MS + 1500 }],
];

for (const dialect of DIALECTS) {
  describe(`claims hook on Gatehouse's tokens (${dialect})`, () => {
    let hook: HookReceiver;
    let t: TestApp;
    before(async () => {
      hook = await startHookReceiver();
      t = await buildTestApp(dialect, {
        env: hookEnv(hook, { TOKEN_HOOK_TIMEOUT_MS: String(HOOK_TIMEOUT_MS) }),
      });
    });
    after(async () => {
      await t?.destroy();
      await hook?.close();
    });

    const login = (email: string, password = PASSWORD) =>
      t.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password } });
    const refresh = (token: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token: token } });
    const sessionsOf = async (userId: string) =>
      (await t.ctx.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).length;

    it('login: the signed call carries the public user and every claim as signed; the answer is merged', async () => {
      hook.mode = 'example';
      hook.decide = () => ({ plan: 'pro', tenant: { id: 't1', seats: 5 } });
      const user = await createUser(t, { password: PASSWORD, name: 'Ada' });
      const before = hook.calls.length;
      const res = await login(user.email);
      assert.equal(res.statusCode, 200, res.body);
      const body = json<{ access_token: string; refresh_token: string }>(res);
      const claims = jwtPayload(body.access_token);
      assert.equal(claims.plan, 'pro');
      assert.deepEqual(claims.tenant, { id: 't1', seats: 5 });

      assert.equal(hook.calls.length, before + 1, 'one call for one token');
      const call = hook.calls.at(-1)!;
      assert.equal(call.verified, true, 'standardwebhooks verifies the signature with TOKEN_HOOK_SECRET');
      assert.match(String(call.headers['webhook-id']), /^msg_/);
      assert.equal(call.body.type, 'token.claims');
      assert.ok(!Number.isNaN(Date.parse(call.body.timestamp)));
      const { data } = call.body;
      assert.equal(data.token, 'access_token');
      assert.equal(data.client_id, null);
      assert.equal(data.organization, null);
      assert.equal(data.audience, claims.aud);
      assert.equal(data.user.id, user.id);
      assert.equal(data.user.email, user.email);
      assert.deepEqual(Object.keys(data.user).sort(), [
        'created_at',
        'email',
        'email_verified',
        'id',
        // docs/api.md §22: every user object names its kind (person or service).
        'kind',
        'last_login_at',
        // docs/api.md §24: every user object names its language (a BCP 47 tag or null).
        'locale',
        'name',
        'role',
        'status',
        'updated_at',
      ]);
      // Every claim as it was signed: the token is exactly the sent claims plus the answer's.
      const { plan: _p, tenant: _t, ...signedWithoutExtras } = claims;
      assert.deepEqual(data.claims, signedWithoutExtras);
      // Never a secret, hash or token.
      for (const secret of [
        PASSWORD,
        body.access_token,
        body.refresh_token,
        HOOK_SECRET,
        'password_hash',
        '$argon2',
      ]) {
        assert.ok(!call.raw.includes(secret), `the call does not contain ${secret.slice(0, 12)}…`);
      }
      // verify-token shows the merged claims: they are in the signed token Gatehouse accepts.
      const verified = await t.app.inject({
        method: 'GET',
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${body.access_token}` },
      });
      assert.equal(verified.statusCode, 200, verified.body);
      assert.equal(json<{ claims: { plan: string } }>(verified).claims.plan, 'pro');
    });

    it('refresh: the new access token is asked for too, with the same session', async () => {
      hook.mode = 'example';
      hook.decide = ({ claims }) => ({ plan: claims.sid ? 'pro' : 'none' });
      const user = await createUser(t, { password: PASSWORD });
      const first = json<{ access_token: string; refresh_token: string }>(await login(user.email));
      hook.decide = () => ({ plan: 'enterprise' });
      const res = await refresh(first.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      const claims = jwtPayload(json<{ access_token: string }>(res).access_token);
      assert.equal(claims.plan, 'enterprise');
      const call = hook.calls.at(-1)!;
      assert.equal(call.verified, true);
      assert.equal(call.body.data.claims.sid, jwtPayload(first.access_token).sid);
      assert.ok(!call.raw.includes(first.refresh_token), 'the presented refresh token is never sent');
    });

    it('`{}` and `{"claims": {}}` add nothing', async () => {
      const user = await createUser(t, { password: PASSWORD });
      for (const body of ['{}', '{"claims":{}}']) {
        hook.mode = { status: 200, body };
        const res = await login(user.email);
        assert.equal(res.statusCode, 200, res.body);
        const claims = jwtPayload(json<{ access_token: string }>(res).access_token);
        assert.deepEqual(claims, hook.calls.at(-1)!.body.data.claims);
      }
    });

    for (const [what, mode] of FAILURES) {
      it(`deny: ${what} issues nothing (503 token_hook_failed) and consumes nothing`, async () => {
        hook.mode = 'example';
        hook.decide = () => ({ plan: 'pro' });
        const user = await createUser(t, { password: PASSWORD });
        const good = json<{ refresh_token: string }>(await login(user.email));
        const sessions = await sessionsOf(user.id);

        hook.mode = mode;
        const refused = await login(user.email);
        assert.equal(refused.statusCode, 503, refused.body);
        assert.equal(json(refused).code, 'token_hook_failed');
        assert.ok(!refused.body.includes('127.0.0.1'), 'the answer names no hook URL');
        assert.equal(await sessionsOf(user.id), sessions, 'no session opened');

        const refusedRefresh = await refresh(good.refresh_token);
        assert.equal(refusedRefresh.statusCode, 503, refusedRefresh.body);
        assert.equal(json(refusedRefresh).code, 'token_hook_failed');

        // Once the hook answers, the same refresh token works (it was not rotated).
        hook.mode = 'example';
        const again = await refresh(good.refresh_token);
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(jwtPayload(json<{ access_token: string }>(again).access_token).plan, 'pro');
      });
    }

    it('a failed hook is no failed login: six refused sign-ins leave the throttle (5) untouched', async () => {
      const user = await createUser(t, { password: PASSWORD });
      hook.mode = { status: 502 };
      for (let i = 0; i < 6; i += 1) {
        const res = await login(user.email);
        assert.equal(res.statusCode, 503, `attempt ${i + 1}: ${res.body}`);
      }
      hook.mode = 'example';
      const res = await login(user.email);
      assert.equal(res.statusCode, 200, res.body);
      // And a wrong password is still counted as one: the throttle works as before.
      for (let i = 0; i < 5; i += 1)
        assert.equal((await login(user.email, 'wrong password but long enough')).statusCode, 401);
      assert.equal((await login(user.email)).statusCode, 429);
    });
    it('change-password: a refused hook changes nothing (password, sessions) and counts no failure', async () => {
      hook.mode = 'example';
      const user = await createUser(t, { password: PASSWORD });
      const session = json<{ access_token: string; refresh_token: string }>(await login(user.email));
      const change = () =>
        t.app.inject({
          method: 'PUT',
          url: '/api/v1/change-password',
          headers: { authorization: `Bearer ${session.access_token}` },
          payload: { current_password: PASSWORD, new_password: 'another long and unguessable passphrase 8' },
        });
      hook.mode = { status: 500 };
      for (let i = 0; i < 6; i += 1) {
        const res = await change();
        assert.equal(res.statusCode, 503, `attempt ${i + 1}: ${res.body}`);
        assert.equal(json(res).code, 'token_hook_failed');
      }
      hook.mode = 'example';
      // The old password still signs in and the session it would have revoked still refreshes.
      assert.equal((await login(user.email)).statusCode, 200);
      assert.equal((await refresh(session.refresh_token)).statusCode, 200);
      // Six refusals left the throttle (5) alone: the change goes through once the hook answers.
      const fresh = json<{ access_token: string }>(await login(user.email));
      const done = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        headers: { authorization: `Bearer ${fresh.access_token}` },
        payload: { current_password: PASSWORD, new_password: 'another long and unguessable passphrase 8' },
      });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(jwtPayload(json<{ access_token: string }>(done).access_token).plan, 'pro');
    });
  });

  describe(`claims hook: allow, and a refused address (${dialect})`, () => {
    let hook: HookReceiver;
    let t: TestApp;
    let refusing: TestApp;
    const lines: string[] = [];
    before(async () => {
      hook = await startHookReceiver();
      t = await buildTestApp(dialect, {
        env: hookEnv(hook, { TOKEN_HOOK_FAILURE: 'allow', TOKEN_HOOK_TIMEOUT_MS: '500', LOG_LEVEL: 'warn' }),
        logLines: lines,
      });
      // `localhost` resolves to a loopback address, refused at the call without WEBHOOK_ALLOW_PRIVATE.
      refusing = await buildTestApp(dialect, {
        env: {
          TOKEN_HOOK_URL: hook.url.replace('127.0.0.1', 'localhost'),
          TOKEN_HOOK_SECRET: HOOK_SECRET,
          WEBHOOK_ALLOW_HTTP: 'true',
        },
      });
    });
    after(async () => {
      await t?.destroy();
      await refusing?.destroy();
      await hook?.close();
    });

    for (const [what, mode] of FAILURES) {
      it(`allow: ${what} issues the token without extras and logs a warning without secrets`, async () => {
        const user = await createUser(t, { password: PASSWORD });
        hook.mode = mode !== 'example' && mode.delayMs ? { ...mode, delayMs: 1500 } : mode;
        const from = lines.length;
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: user.email, password: PASSWORD },
        });
        assert.equal(res.statusCode, 200, res.body);
        const claims = jwtPayload(json<{ access_token: string }>(res).access_token);
        assert.equal(claims.plan, undefined);
        assert.equal(claims.sub, user.id);
        const warnings = lines.slice(from).filter((l) => l.includes('claims hook failed'));
        assert.equal(warnings.length, 1, lines.slice(from).join('\n'));
        const warning = JSON.parse(warnings[0]!) as { reason: string; level: number };
        assert.ok(warning.reason, 'the warning says why');
        for (const secret of [HOOK_SECRET, hook.url, PASSWORD, 'x'.repeat(100)]) {
          assert.ok(!warnings[0]!.includes(secret), 'no secret, URL or answer text in the log');
        }
      });
    }

    it('a name resolving to a refused address fails the call (deny: 503), nothing reaches the receiver', async () => {
      const user = await createUser(refusing, { password: PASSWORD });
      hook.mode = 'example';
      const calls = hook.calls.length;
      const res = await refusing.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(json(res).code, 'token_hook_failed');
      assert.equal(hook.calls.length, calls, 'no connection was made');
    });
  });
}

describe('claims hook: the start refuses bad settings, naming the variable', () => {
  const start = (env: Record<string, string>) => () => loadConfig(testEnv('sqlite::memory:', env));
  const refused = (env: Record<string, string>, line: RegExp) =>
    assert.throws(start(env), (err: Error) => {
      assert.equal(err.name, 'ConfigError');
      assert.match(err.message, line);
      assert.ok(!err.message.includes('s3cret'), 'the message does not repeat a password');
      return true;
    });

  it('a URL that is not https (without WEBHOOK_ALLOW_HTTP)', () =>
    refused(
      { TOKEN_HOOK_URL: 'http://hooks.example.com/claims', TOKEN_HOOK_SECRET: HOOK_SECRET },
      /^TOKEN_HOOK_URL must use https/m,
    ));
  it('a URL with userinfo', () =>
    refused(
      { TOKEN_HOOK_URL: 'https://me:s3cret@hooks.example.com/claims', TOKEN_HOOK_SECRET: HOOK_SECRET },
      /^TOKEN_HOOK_URL must not contain a user name or password/m,
    ));
  for (const literal of ['10.0.0.7', '127.0.0.1', '[::1]', '169.254.169.254', '[::ffff:192.168.0.1]']) {
    it(`a literal refused address (${literal})`, () =>
      refused(
        { TOKEN_HOOK_URL: `https://${literal}/claims`, TOKEN_HOOK_SECRET: HOOK_SECRET },
        /^TOKEN_HOOK_URL must not point to a private/m,
      ));
  }
  it('a URL without TOKEN_HOOK_SECRET', () =>
    refused(
      { TOKEN_HOOK_URL: 'https://hooks.example.com/claims' },
      /^TOKEN_HOOK_URL is set but TOKEN_HOOK_SECRET is not/m,
    ));
  it('a secret not in the whsec_ form', () =>
    refused(
      { TOKEN_HOOK_URL: 'https://hooks.example.com/claims', TOKEN_HOOK_SECRET: 'hunter2' },
      /^TOKEN_HOOK_SECRET must be whsec_/m,
    ));
  it('a secret without a URL', () =>
    refused({ TOKEN_HOOK_SECRET: HOOK_SECRET }, /^TOKEN_HOOK_SECRET is set but TOKEN_HOOK_URL is not/m));
  it('an unknown failure mode and a timeout out of range', () => {
    refused({ TOKEN_HOOK_FAILURE: 'maybe' }, /^TOKEN_HOOK_FAILURE must be deny or allow/m);
    refused({ TOKEN_HOOK_TIMEOUT_MS: '0' }, /^TOKEN_HOOK_TIMEOUT_MS must be between/m);
  });
  const withHook = { TOKEN_HOOK_URL: 'https://hooks.example.com/claims', TOKEN_HOOK_SECRET: HOOK_SECRET };
  it('TOKEN_HOOK_ID_TOKEN_CLAIMS naming a reserved claim, one the ID token already carries, or a non-name', () => {
    refused(
      { ...withHook, TOKEN_HOOK_ID_TOKEN_CLAIMS: 'plan,email' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS: "email" is a claim Gatehouse sets itself/m,
    );
    refused(
      { ...withHook, TOKEN_HOOK_ID_TOKEN_CLAIMS: 'sub' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS: "sub" is a claim Gatehouse sets itself/m,
    );
    refused(
      { ...withHook, TOKEN_HOOK_ID_TOKEN_CLAIMS: 'updated_at' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS: "updated_at" is a claim Gatehouse sets itself/m,
    );
    refused(
      { ...withHook, TOKEN_HOOK_ID_TOKEN_CLAIMS: '__proto__' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS: "__proto__" is not a claim name/m,
    );
    refused(
      { ...withHook, TOKEN_HOOK_ID_TOKEN_CLAIMS: 'plan,9lives' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS: "9lives" is not a claim name/m,
    );
    refused(
      { ...withHook, TOKEN_HOOK_ID_TOKEN_CLAIMS: 'plan, plan' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS names a claim twice/m,
    );
    refused(
      { TOKEN_HOOK_ID_TOKEN_CLAIMS: 'plan' },
      /^TOKEN_HOOK_ID_TOKEN_CLAIMS is set but TOKEN_HOOK_URL is not/m,
    );
  });
  it('TOKEN_HOOK_ID_TOKEN_CLAIMS: a comma list, spaces trimmed', () => {
    const config = start({
      ...withHook,
      TOKEN_HOOK_ID_TOKEN_CLAIMS: ' plan, https://example.com/tier ,team.id',
    })();
    assert.deepEqual(config.tokenHook?.idTokenClaims, ['plan', 'https://example.com/tier', 'team.id']);
  });
  it('every problem at once, one a line', () =>
    assert.throws(
      start({ TOKEN_HOOK_URL: 'http://10.0.0.7/x', TOKEN_HOOK_FAILURE: 'maybe' }),
      (err: Error) => err.message.split('\n').filter((l) => l.startsWith('TOKEN_HOOK')).length === 3,
    ));
  it('allowed: http and a private literal with WEBHOOK_ALLOW_HTTP/PRIVATE; defaults deny and 2000 ms', () => {
    const config = start({
      TOKEN_HOOK_URL: 'http://10.0.0.7/claims',
      TOKEN_HOOK_SECRET: HOOK_SECRET,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    })();
    assert.deepEqual(config.tokenHook, {
      url: 'http://10.0.0.7/claims',
      secret: HOOK_SECRET,
      timeoutMs: 2000,
      failure: 'deny',
      idTokenClaims: [],
    });
    assert.equal(start({})().tokenHook, null, 'no hook by default');
  });
});

describe('claims hook: a real start stops on a bad setting before the database is touched', () => {
  it('http without WEBHOOK_ALLOW_HTTP, and no secret: one line each, exit 1, no database file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-hook-'));
    try {
      const file = join(dir, 'never.db');
      const result = await runEntry(
        'src/main.ts',
        [],
        {
          DATABASE_URL: `sqlite:${file}`,
          PORT: '0',
          LOG_LEVEL: 'silent',
          TOKEN_HOOK_URL: 'http://hooks.example.com/claims',
        },
        dir,
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, /TOKEN_HOOK_URL must use https \(http needs WEBHOOK_ALLOW_HTTP=true\)/);
      assert.match(result.stderr, /TOKEN_HOOK_URL is set but TOKEN_HOOK_SECRET is not/);
      assert.equal(existsSync(file), false, 'nothing was created');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
