/*
 * Key creations for one owner take turns in this process before they open their transaction. In the
 * transaction each waits for the owner's lock (api-keys.queries.ts, lockOwner: PostgreSQL's advisory
 * lock, which keeps the 100-live-keys limit exact across instances) while holding a pooled
 * connection: 100 parallel creations for one owner held every connection of the pool waiting for
 * one another, and every other request of the instance waited for a connection until the pool's
 * timeout. In turns, an instance has at most one creation per owner waiting for the lock.
 */
const turns = new Map<string, Promise<unknown>>();

/** Runs `work` once every earlier call for `owner` in this process has settled. */
export function inOwnerTurn<T>(owner: string, work: () => Promise<T>): Promise<T> {
  const mine = (turns.get(owner) ?? Promise.resolve()).then(work);
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  turns.set(owner, settled);
  void settled.then(() => {
    if (turns.get(owner) === settled) turns.delete(owner);
  });
  return mine;
}
