// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule"). The CLI's `gatehouse modules` switches modules
// through the same function as the admin API.
export { type SwitchedModule, switchModule } from './admin.service.ts';
