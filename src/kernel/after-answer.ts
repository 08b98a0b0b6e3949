import type { AppContext } from './context.types.ts';

const pending = new WeakMap<AppContext, Set<Promise<void>>>();
const holds = new WeakMap<AppContext, { gate: Promise<void>; release: () => void }>();

/**
 * Work a request owes but must not make its answer wait for: the mail of forgot-password and of an
 * e-mail sign-in request, which only an existing account gets (docs/security.md, "No enumeration by
 * time"). It starts on the next turn of the event loop, after the answer is written, in its own
 * transaction; a failure is logged (the person can ask again); shutdown waits for it before the
 * database closes.
 */
export function afterAnswer(ctx: AppContext, what: string, work: () => Promise<void>): void {
  let tasks = pending.get(ctx);
  if (tasks === undefined) {
    const created = new Set<Promise<void>>();
    pending.set(ctx, created);
    // Pushed after the start's closers, so it runs before them (newest first): before the outbox
    // stops and the database closes.
    ctx.closers.push(() => {
      holds.get(ctx)?.release();
      return settleAfterAnswers(ctx);
    });
    tasks = created;
  }
  const own = tasks;
  const task = new Promise<void>((resolve) => setImmediate(resolve))
    .then(() => holds.get(ctx)?.gate)
    .then(work)
    .catch((err: unknown) => ctx.log.error({ err, what }, 'the work after an answer failed'))
    .finally(() => own.delete(task));
  own.add(task);
}

/** Resolves once every piece of work after an answer started so far has finished. */
export async function settleAfterAnswers(ctx: AppContext): Promise<void> {
  const tasks = pending.get(ctx);
  while (tasks !== undefined && tasks.size > 0) await Promise.allSettled([...tasks]);
}

/**
 * Holds back the work after answers until the returned function is called: the tests compare what a
 * request did up to its answer (test/security/enumeration-work.test.ts) without the work after it
 * racing their count.
 */
export function holdAfterAnswers(ctx: AppContext): () => void {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const hold = {
    gate,
    release: () => {
      if (holds.get(ctx) === hold) holds.delete(ctx);
      release();
    },
  };
  holds.set(ctx, hold);
  return hold.release;
}
