/** The result of one dependency check in `/health/detailed`. */
export interface HealthCheck {
  status: 'ok' | 'error' | 'disabled';
  [detail: string]: unknown;
}
