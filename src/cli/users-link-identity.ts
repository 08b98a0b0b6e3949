import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

/** `users link-identity --email E --issuer I --subject S` (docs/api.md §16): an operator links a provider identity. */
export const usersLinkIdentityCommand = defineCommand({
  name: 'users link-identity',
  summary: "link an identity provider's identity (issuer and subject) to an account",
  details:
    'For accounts that sign-in by e-mail may not link (docs/api.md §16: admins, unproven addresses);\n' +
    'the operator vouches for the link. Audited as identity.link.',
  options: {
    email: { type: 'string', value: 'address', description: 'the account to link to', required: true },
    issuer: {
      type: 'string',
      value: 'url',
      description: "the provider's issuer, exactly as configured (OIDC_ISSUER)",
      required: true,
    },
    subject: {
      type: 'string',
      value: 'sub',
      description: "the identity's subject (the sub claim)",
      required: true,
    },
  },
  async run({ values, config }) {
    const { email, issuer, subject } = values;
    if (typeof email !== 'string' || typeof issuer !== 'string' || typeof subject !== 'string') {
      throw new CliError('users link-identity needs --email, --issuer and --subject');
    }
    await withDatabase(config, async ({ db }) => {
      const { linkIdentityByOperator, LinkIdentityError } = await import('../modules/providers/index.ts');
      const issuers = config.oidc.issuer === null ? [] : [config.oidc.issuer];
      const result = await linkIdentityByOperator(db, { email, issuer, subject }, issuers).catch(
        (err: unknown) => {
          throw err instanceof LinkIdentityError ? new CliError(err.message) : err;
        },
      );
      console.log(
        result.linked
          ? `linked ${issuer} ${subject} to ${result.email}`
          : `${issuer} ${subject} was already linked to ${result.email}`,
      );
    });
  },
});
