import type { ModuleInfo } from './module-state.ts';

/** The modules of API.md §2: which are required and in which form each optional one starts enabled. */
export const MODULE_INFO: readonly ModuleInfo[] = [
  { name: 'core', required: true, description: 'Service core and its status', enabledIn: ['A', 'B'] },
  {
    name: 'health',
    required: true,
    description: 'Liveness and dependency health checks',
    enabledIn: ['A', 'B'],
  },
  { name: 'admin', required: true, description: 'Run-time module switches', enabledIn: ['A', 'B'] },
  {
    name: 'auth',
    required: true,
    description: 'Login, logout, refresh and token verification',
    enabledIn: ['A', 'B'],
  },
  {
    name: 'users',
    required: true,
    description: 'User listing, search, statistics and updates',
    enabledIn: ['A', 'B'],
  },
  {
    name: 'account',
    required: false,
    description: 'Self-service profile and password change',
    enabledIn: ['A'],
  },
  {
    name: 'user_admin',
    required: false,
    description: 'Admin creation and deletion of users',
    enabledIn: ['A'],
  },
  {
    name: 'idp',
    required: false,
    description: 'Sign-in through an external OpenID Connect provider',
    enabledIn: ['A'],
  },
  { name: 'invitations', required: false, description: 'Invitation onboarding by e-mail', enabledIn: ['B'] },
  // Added after API.md §2's nine: off in both forms, so their index stays exactly as specified.
  { name: 'audit', required: false, description: 'Read access to the audit trail', enabledIn: [] },
];
