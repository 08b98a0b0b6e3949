import type { Logger } from 'pino';

/** Whatever holds the one `AfterAnswers` (the context); named structurally so context.types.ts can name this file. */
interface WithAfterAnswers {
  readonly afterAnswers: AfterAnswers;
}

/**
 * Work a request owes but must not make its answer wait for: the mail of forgot-password and of an
 * e-mail sign-in request, which only an existing account gets (docs/security.md, "No enumeration by
 * time"). One per context (`ctx.afterAnswers`, made by createContext); closeContext settles it
 * before any closer runs: before the outbox stops and the database closes.
 */
export interface AfterAnswers {
  /** Starts `work` on the next turn of the event loop, after the answer is written; a failure is logged. */
  run(what: string, work: () => Promise<void>): void;
  /** Resolves once every piece of work started so far has finished. */
  settle(): Promise<void>;
  /** Holds back the work until the returned function is called (tests count a request's own work). */
  hold(): () => void;
  /** Releases a hold and settles: the shutdown's first step. */
  close(): Promise<void>;
}

export function createAfterAnswers(log: Logger): AfterAnswers {
  const tasks = new Set<Promise<void>>();
  let held: { gate: Promise<void>; release: () => void } | null = null;
  const settle = async () => {
    while (tasks.size > 0) await Promise.allSettled([...tasks]);
  };
  return {
    run(what, work) {
      const task = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => held?.gate)
        .then(work)
        .catch((err: unknown) => log.error({ err, what }, 'the work after an answer failed'))
        .finally(() => tasks.delete(task));
      tasks.add(task);
    },
    settle,
    hold() {
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const hold = {
        gate,
        release: () => {
          if (held === hold) held = null;
          release();
        },
      };
      held = hold;
      return hold.release;
    },
    async close() {
      held?.release();
      await settle();
    },
  };
}

/**
 * Work after the answer (see `AfterAnswers`): starts after the answer is written, in its own
 * transaction; a failure is logged (the person can ask again); shutdown waits for it.
 */
export function afterAnswer(ctx: WithAfterAnswers, what: string, work: () => Promise<void>): void {
  ctx.afterAnswers.run(what, work);
}

/** Resolves once every piece of work after an answer started so far has finished. */
export function settleAfterAnswers(ctx: WithAfterAnswers): Promise<void> {
  return ctx.afterAnswers.settle();
}

/**
 * Holds back the work after answers until the returned function is called: the tests compare what a
 * request did up to its answer (test/security/enumeration-work.test.ts) without the work after it
 * racing their count.
 */
export function holdAfterAnswers(ctx: WithAfterAnswers): () => void {
  return ctx.afterAnswers.hold();
}
