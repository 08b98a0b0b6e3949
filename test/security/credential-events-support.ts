import assert from 'node:assert/strict';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';
import { createUser, sessionFor } from '../helpers/users.ts';
import { enableTotp, nextAddress, PASSWORD, passwordStep } from '../mfa/helpers.ts';
import {
  linkIn,
  mailsTo,
  post,
  RESET_PREFIX,
  tokenOfLink,
  VERIFY_PREFIX,
  waitUntil,
} from '../recovery/helpers.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';

/*
 * Fixtures of test/security/credential-events.test.ts (docs/api.md §16, "Credential events end every
 * outstanding link"): a user holding one live link of each purpose, got the way a person gets them
 * (through the API and the real SMTP server), and an outstanding mfa_token.
 */

export { NEW_PASSWORD } from '../recovery/helpers.ts';
export { PASSWORD };

export type LinkKind = 'password_reset' | 'email_verify' | 'email_change';
export const LINK_KINDS: readonly LinkKind[] = ['password_reset', 'email_verify', 'email_change'];

/** A user with every kind of outstanding link and an mfa_token. */
export interface Armed {
  user: UserRow;
  /** An access token of a live session (its TOTP enrolment kept it). */
  access: string;
  recoveryCodes: string[];
  links: Record<LinkKind, string>;
  mfaToken: string;
  /** The address the `email_change` link moves the account to. */
  newEmail: string;
  /** A live e-mail sign-in pair (docs/api.md §20): its link's token and its code. */
  signIn: { token: string; code: string };
}

const bearer = (access: string) => ({ authorization: `Bearer ${access}` });

/** The one mail to `to` carrying a link that starts with `prefix`. */
async function linkMailedTo(smtp: SmtpHarness, to: string, prefix: string): Promise<string> {
  const mail = await waitUntil(
    () => mailsTo(smtp, to).find((m) => (m.text ?? '').includes(prefix)),
    `a ${prefix}… mail to ${to}`,
  );
  return tokenOfLink(linkIn(mail, prefix));
}

/**
 * A fresh user `<label>@example.com` with TOTP (so a password login hands out an mfa_token), then,
 * each through its endpoint: a verification link (the address made unproven first), a reset link,
 * an address-change link to `<label>-new@example.com`, and an mfa_token from a password login.
 * Every link is checked live (200) before the caller's credential event.
 */
export async function armUser(t: TestApp, smtp: SmtpHarness, label: string): Promise<Armed> {
  const email = `${label}@example.com`;
  const newEmail = `${label}-new@example.com`;
  const user = await createUser(t, { email, password: PASSWORD });
  const { access_token: access } = await sessionFor(t, user);
  const { recoveryCodes } = await enableTotp(t, access);
  await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', user.id).execute();

  const from = nextAddress();
  const asked = [
    await post(t, '/api/v1/email/verification', undefined, bearer(access), from),
    await post(t, '/api/v1/password/forgot', { email }, {}, from),
    await post(
      t,
      '/api/v1/email/change',
      { new_email: newEmail, current_password: PASSWORD },
      bearer(access),
      from,
    ),
  ];
  for (const res of asked) assert.equal(res.statusCode, 202, res.body);
  const links: Record<LinkKind, string> = {
    email_verify: await linkMailedTo(smtp, email, VERIFY_PREFIX),
    password_reset: await linkMailedTo(smtp, email, RESET_PREFIX),
    email_change: await linkMailedTo(smtp, newEmail, VERIFY_PREFIX),
  };
  const signInAsk = await post(t, '/api/v1/login/email', { email }, {}, from);
  assert.equal(signInAsk.statusCode, 202, signInAsk.body);
  const signInMail = await waitUntil(
    () => mailsTo(smtp, email).find((m) => /sign-in link and code/i.test(m.subject)),
    `a sign-in mail to ${email}`,
  );
  const signIn = {
    token: /\/account\/sign-in\/email\/([A-Za-z0-9_-]+)/.exec(signInMail.text ?? '')?.[1] ?? '',
    code: /sign-in code is (\d{6})/.exec(signInMail.text ?? '')?.[1] ?? '',
  };
  assert.ok(signIn.token && signIn.code, 'the sign-in mail has a link and a code');
  const { mfa_token: mfaToken } = await passwordStep(t, user);
  for (const kind of LINK_KINDS) {
    const open = await openLink(t, kind, links[kind], from);
    assert.equal(open.status, 200, `${label}: the ${kind} link is live before the event`);
  }
  return { user, access, recoveryCodes, links, mfaToken, newEmail, signIn };
}

/** Where a link of a kind is opened (GET) and used (POST). */
function linkUrl(kind: LinkKind, token: string): string {
  return kind === 'password_reset' ? `/api/v1/password/reset/${token}` : `/api/v1/email/verify/${token}`;
}

/** GET of a link: its status and problem code. */
export async function openLink(t: TestApp, kind: LinkKind, token: string, remoteAddress = nextAddress()) {
  const res = await t.app.inject({ url: linkUrl(kind, token), remoteAddress });
  return { status: res.statusCode, code: res.statusCode === 200 ? null : json(res).code };
}

/** POST of a link, as its page would send it: its status and problem code. */
export async function useLink(t: TestApp, kind: LinkKind, token: string, remoteAddress = nextAddress()) {
  const body = kind === 'password_reset' ? { password: 'a brand new passphrase nobody knows' } : undefined;
  const res = await post(t, linkUrl(kind, token), body, {}, remoteAddress);
  return { status: res.statusCode, code: res.statusCode === 200 ? null : json(res).code };
}

/** POST /login/mfa with a good recovery code: whether the mfa_token still completes a sign-in. */
export async function finishMfa(t: TestApp, mfaToken: string, code: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/login/mfa',
    remoteAddress: nextAddress(),
    payload: { mfa_token: mfaToken, code },
  });
  return { status: res.statusCode, code: res.statusCode === 200 ? null : json(res).code };
}

/** POST /login/email/verify with a pair's code or its link's token: its status and problem code. */
export async function useSignIn(t: TestApp, payload: { email: string; code: string } | { token: string }) {
  const res = await post(t, '/api/v1/login/email/verify', payload, {}, nextAddress());
  return { status: res.statusCode, code: res.statusCode === 200 ? null : json(res).code };
}
