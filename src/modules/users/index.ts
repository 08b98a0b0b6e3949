// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { parseUserId } from './list/users-list.service.ts';
export { formatFor, readRecords, TransferFileError } from './transfer/user-transfer.format.ts';
export { exportUsers, ImportFailedError, importUsers } from './transfer/user-transfer.service.ts';
export { unlockUserByEmail, unlockUserById } from './unlock.service.ts';
export { CreateBody, IdParams } from './users.schemas.ts';
export { createUser, deleteUser, getUser } from './users.service.ts';
