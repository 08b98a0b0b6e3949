import { backupCommand } from './backup.ts';
import {
  clientsCreateCommand,
  clientsDeleteCommand,
  clientsListCommand,
  clientsRegistrationTokenCommand,
  clientsUpdateCommand,
} from './clients.ts';
import type { CliCommand } from './command.ts';
import { createAdminCommand } from './create-admin.ts';
import { doctorCommand } from './doctor.ts';
import { keysCreateCommand, keysListCommand, keysRevokeCommand } from './keys.ts';
import { migrateCommand } from './migrate.ts';
import { modulesDisableCommand, modulesEnableCommand, modulesListCommand } from './modules.ts';
import { rotateKeysCommand } from './rotate-keys.ts';
import { serveCommand } from './serve.ts';
import { sessionsRevokeAllCommand } from './sessions-revoke-all.ts';
import { usersLinkIdentityCommand } from './users-link-identity.ts';
import { usersMfaResetCommand } from './users-mfa-reset.ts';
import { usersResetLinkCommand } from './users-reset-link.ts';
import { usersExportCommand, usersImportCommand } from './users-transfer.ts';
import { usersUnlockCommand } from './users-unlock.ts';
import {
  webhooksAddCommand,
  webhooksEnableCommand,
  webhooksListCommand,
  webhooksRemoveCommand,
} from './webhooks.ts';

/**
 * Every command of `gatehouse`, in the order its help lists them. A new command: a file in this
 * folder exporting `defineCommand({...})` (src/cli/command.ts), added here; its --help, strict
 * option parsing and the test that --help and unknown options change nothing come with it.
 */
export const COMMANDS: readonly CliCommand[] = [
  serveCommand,
  migrateCommand,
  createAdminCommand,
  rotateKeysCommand,
  backupCommand,
  doctorCommand,
  modulesListCommand,
  modulesEnableCommand,
  modulesDisableCommand,
  usersImportCommand,
  usersExportCommand,
  usersUnlockCommand,
  usersResetLinkCommand,
  usersLinkIdentityCommand,
  usersMfaResetCommand,
  sessionsRevokeAllCommand,
  webhooksListCommand,
  webhooksAddCommand,
  webhooksEnableCommand,
  webhooksRemoveCommand,
  clientsCreateCommand,
  clientsListCommand,
  clientsUpdateCommand,
  clientsDeleteCommand,
  clientsRegistrationTokenCommand,
  keysCreateCommand,
  keysListCommand,
  keysRevokeCommand,
];
