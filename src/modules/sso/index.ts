// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule"). The module switch asks sso's needs here.
export { checkSsoNeeds } from './module-needs.ts';
