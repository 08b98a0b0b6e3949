import type { ModuleInfo } from './module-state.ts';

/** The modules of docs/api.md §2: which are required and in which form each optional one starts enabled. */
export const MODULE_INFO: readonly ModuleInfo[] = [
  { name: 'core', required: true, description: 'Service core and its status', enabledIn: ['A', 'B', 'FULL'] },
  {
    name: 'health',
    required: true,
    description: 'Liveness and dependency health checks',
    enabledIn: ['A', 'B', 'FULL'],
  },
  { name: 'admin', required: true, description: 'Run-time module switches', enabledIn: ['A', 'B', 'FULL'] },
  {
    name: 'auth',
    required: true,
    description: 'Login, logout, refresh and token verification',
    enabledIn: ['A', 'B', 'FULL'],
  },
  {
    name: 'users',
    required: true,
    description: 'User listing, search, statistics and updates',
    enabledIn: ['A', 'B', 'FULL'],
  },
  {
    name: 'account',
    required: false,
    description: 'Self-service profile and password change',
    enabledIn: ['A', 'FULL'],
  },
  {
    name: 'user_admin',
    required: false,
    description: 'Admin creation and deletion of users',
    enabledIn: ['A', 'FULL'],
  },
  {
    name: 'idp',
    required: false,
    description: 'Sign-in through an external OpenID Connect provider',
    enabledIn: ['A', 'FULL'],
  },
  {
    name: 'invitations',
    required: false,
    description: 'Invitation onboarding by e-mail',
    enabledIn: ['B', 'FULL'],
  },
  // Added after docs/api.md §2's nine: off in both forms, so their index stays exactly as specified;
  // the `full` preset turns them on, all but `registration` (public sign-up is a deliberate policy).
  { name: 'audit', required: false, description: 'Read access to the audit trail', enabledIn: ['FULL'] },
  {
    name: 'recovery',
    required: false,
    description: 'Password recovery by e-mailed link',
    enabledIn: ['FULL'],
  },
  {
    name: 'email',
    required: false,
    description: 'E-mail address verification and change',
    enabledIn: ['FULL'],
  },
  { name: 'registration', required: false, description: 'Public self sign-up', enabledIn: [] },
  {
    name: 'mfa',
    required: false,
    description: 'Second factors: TOTP and recovery codes',
    enabledIn: ['FULL'],
  },
  { name: 'passkeys', required: false, description: 'Passkeys (WebAuthn)', enabledIn: ['FULL'] },
  {
    name: 'sessions',
    required: false,
    description: 'Session lists and revocation',
    enabledIn: ['FULL'],
  },
  {
    name: 'oauth',
    required: false,
    description: 'Authorization server: OAuth 2.1 and OpenID Connect provider',
    enabledIn: ['FULL'],
  },
  {
    name: 'providers',
    required: false,
    description: 'Many external sign-in providers on the hosted pages',
    enabledIn: ['FULL'],
  },
  {
    name: 'webhooks',
    required: false,
    description: 'Signed webhooks for account events',
    enabledIn: ['FULL'],
  },
  {
    name: 'passwordless',
    required: false,
    description: 'Sign-in by e-mail: a one-time link or code',
    enabledIn: ['FULL'],
  },
  // Pages are not in the index (docs/api.md §15), so they can be on in every form.
  {
    name: 'pages',
    required: false,
    description: 'Hosted sign-in and account pages',
    enabledIn: ['A', 'B', 'FULL'],
  },
  { name: 'console', required: false, description: 'Admin console at /admin', enabledIn: ['A', 'B', 'FULL'] },
];
