// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { unlockUserByEmail } from './unlock.service.ts';
export { formatFor, readRecords, TransferFileError } from './user-transfer.format.ts';
export { exportUsers, ImportFailedError, importUsers } from './user-transfer.service.ts';
export { CreateBody, IdParams } from './users.schemas.ts';
export { createUser, deleteUser, getUser } from './users.service.ts';
export { parseUserId } from './users-list.service.ts';
