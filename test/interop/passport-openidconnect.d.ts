// passport-openidconnect 0.1 ships no types: the strategy as the interop test uses it.
declare module 'passport-openidconnect' {
  import { Strategy as PassportStrategy } from 'passport';
  export class Strategy extends PassportStrategy {
    constructor(options: Record<string, unknown>, verify: (...args: never[]) => void);
  }
}
