// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").
export { createAppMetrics } from './metrics.ts';
