import type { Logger } from 'pino';

/** One background job: a name, a period and the work. */
export interface Job {
  /** `<module>.<what>`, e.g. `auth.prune`: the name in the log and in `/health/detailed`. */
  readonly name: string;
  /** What the job does, for its log line: `<what> failed`, e.g. `auth state pruning`. */
  readonly what: string;
  readonly everyMs: number;
  /** The first run (default: one period after the start). */
  readonly firstAfterMs?: number;
  readonly run: () => Promise<unknown>;
}

/** What `/health/detailed` shows of a job (the reason of a failure goes to the log only). */
export interface JobReport {
  every_s: number;
  /** When the last run ended, or null before the first. */
  last_run_at: string | null;
  /** When a run last failed, or null if none has. */
  last_error_at: string | null;
}

/**
 * Runs the process's background jobs (docs/architecture.md, "Background jobs"): every timer is
 * unref'd (a job never keeps the process alive), a run still going when the next is due is
 * skipped, a failure is logged as `<what> failed` and the job goes on, and `stop()` clears every
 * timer and waits for the runs in progress (it is one of the context's closers).
 */
export interface Scheduler {
  /** Starts a job now (its first run after `firstAfterMs`, or one period). A name is started once. */
  start(job: Job): void;
  /** Each started job, in start order. */
  report(): Record<string, JobReport>;
  stop(): Promise<void>;
}

export function createScheduler(log: Logger): Scheduler {
  interface Entry {
    job: Job;
    timers: NodeJS.Timeout[];
    running: Promise<void> | null;
    lastRunAt: number | null;
    lastErrorAt: number | null;
  }
  const entries = new Map<string, Entry>();
  let stopped = false;

  const runOnce = (entry: Entry) => {
    if (entry.running || stopped) return;
    entry.running = entry.job
      .run()
      .then(
        () => undefined,
        (err: unknown) => {
          entry.lastErrorAt = Date.now();
          log.warn({ err }, `${entry.job.what} failed`);
        },
      )
      .finally(() => {
        entry.lastRunAt = Date.now();
        entry.running = null;
      });
  };

  return {
    start(job) {
      if (stopped || entries.has(job.name)) return;
      const entry: Entry = { job, timers: [], running: null, lastRunAt: null, lastErrorAt: null };
      entries.set(job.name, entry);
      const every = setInterval(() => runOnce(entry), job.everyMs);
      every.unref();
      entry.timers.push(every);
      if (job.firstAfterMs !== undefined) {
        const first = setTimeout(() => runOnce(entry), job.firstAfterMs);
        first.unref();
        entry.timers.push(first);
      }
    },
    report() {
      const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
      return Object.fromEntries(
        [...entries.values()].map((e) => [
          e.job.name,
          { every_s: e.job.everyMs / 1000, last_run_at: iso(e.lastRunAt), last_error_at: iso(e.lastErrorAt) },
        ]),
      );
    },
    async stop() {
      stopped = true;
      for (const entry of entries.values()) for (const timer of entry.timers) clearTimeout(timer);
      await Promise.all([...entries.values()].map((e) => e.running));
    },
  };
}
