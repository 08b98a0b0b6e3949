import { defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

/**
 * `sessions revoke-all [--except-admins]`: ends every session of every user (docs/auth.md,
 * "Sessions"), audited per session; an admin ends one user's sessions through the API instead.
 */
export const sessionsRevokeAllCommand = defineCommand({
  name: 'sessions revoke-all',
  summary: 'end every session of every user (everyone signs in again)',
  details: [
    'Refresh tokens stop at once; access tokens are refused by every instance within the bound of',
    'docs/api.md §16, as for any revocation. Each ended session is audited (`session.revoke`, with',
    'its `session.revoked` webhook event). OAuth grants end with their sessions.',
  ].join('\n'),
  options: {
    'except-admins': {
      type: 'boolean',
      description: 'keep the sessions of admins (the console stays signed in)',
    },
  },
  async run({ values, config }) {
    const exceptAdmins = values['except-admins'] === true;
    await withDatabase(config, async ({ db }) => {
      const { revokeAllSessions } = await import('../modules/sessions/index.ts');
      const done = await revokeAllSessions(db, { exceptAdmins });
      const kept = exceptAdmins ? ' (admins kept theirs)' : '';
      console.log(`ended ${done.sessions} session(s) of ${done.users} user(s)${kept}`);
    });
  },
});
