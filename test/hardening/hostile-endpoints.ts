import { hostileAuthEndpoints } from './hostile-endpoints-auth.ts';
import { hostileFactorsEndpoints } from './hostile-endpoints-factors.ts';
import { hostilePasswordlessEndpoints } from './hostile-endpoints-passwordless.ts';
import { hostileRecoveryEndpoints } from './hostile-endpoints-recovery.ts';
import { hostileUsersEndpoints } from './hostile-endpoints-users.ts';
import type { Fixtures } from './hostile-fixtures.ts';
import type { EndpointRows } from './hostile-rows.ts';

export { type Fixtures, lookAlikes } from './hostile-fixtures.ts';

/** Every endpoint with a body, query or path parameter, and its hostile rows, group by group. */
export function hostileEndpoints(fx: Fixtures): EndpointRows[] {
  return [
    ...hostileAuthEndpoints(fx),
    ...hostileUsersEndpoints(fx),
    ...hostileRecoveryEndpoints(fx),
    ...hostileFactorsEndpoints(fx),
    ...hostilePasswordlessEndpoints(fx),
  ];
}
