import { defineModule } from '../../kernel/module.ts';
import { auditEndpoints } from './audit.routes.ts';
import { pruneExpiredAudit } from './audit.service.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    audit: true;
  }
}

/** The optional `audit` module reads the trail; recording is always on, and so is its retention. */
export const auditModule = defineModule({
  name: 'audit',
  required: false,
  description: 'Read access to the audit trail',
  forms: ['FULL'],
  endpoints: auditEndpoints,
  jobs: [
    // AUDIT_RETENTION_DAYS: shortly after start, then hourly. Every instance may run it; the deletes are idempotent.
    {
      name: 'audit.retention',
      what: 'audit pruning',
      firstAfterMs: 30_000,
      everyMs: 60 * 60_000,
      run: async (ctx): Promise<void> => {
        const n = await pruneExpiredAudit(ctx);
        if (n > 0)
          ctx.log.info({ deleted: n, retention_days: ctx.config.auditRetentionDays }, 'audit entries pruned');
      },
    },
  ],
});
