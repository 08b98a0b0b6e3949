import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { AuditPage, AuditQuery } from './audit.schemas.ts';
import { auditPage } from './audit.service.ts';

/** The optional `audit` module: the admin's read access to the audit trail (recording is always on). */
export function auditEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'admin',
      label: 'audit',
      method: 'GET',
      path: '/api/v1/admin/audit',
      access: 'admin',
      summary: 'List audit entries, newest first, with filters and cursor pagination',
      schema: { querystring: AuditQuery, response: { 200: AuditPage } },
      handler: (req) => {
        const q = req.query;
        return auditPage(
          ctx,
          {
            actorId: q.actor,
            targetId: q.target,
            action: q.action,
            outcome: q.outcome,
            from: q.from === undefined ? undefined : Date.parse(q.from),
            to: q.to === undefined ? undefined : Date.parse(q.to),
          },
          q.limit,
          q.cursor,
        );
      },
    }),
  ];
}
