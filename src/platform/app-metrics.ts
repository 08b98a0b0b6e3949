import type { Counter, Histogram, Registry } from 'prom-client';

/**
 * The app's own Prometheus metrics (`ctx.metrics`), one registry per context: tests build many apps in
 * one process. Made once by createContext with createAppMetrics (src/modules/core/metrics.ts); every
 * way in counts its logins here, so it is the context's, not one module's.
 */
export interface AppMetrics {
  readonly registry: Registry;
  readonly logins: Counter<'outcome'>;
  readonly requests: Histogram<'method' | 'route' | 'status_code'>;
}
