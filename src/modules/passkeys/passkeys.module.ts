import { isIP } from 'node:net';
import { defineModule } from '../../kernel/module.ts';
import { passkeyEndpoints } from './passkeys.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    passkeys: true;
  }
}

export const passkeysModule = defineModule({
  name: 'passkeys',
  required: false,
  description: 'Passkeys (WebAuthn)',
  forms: ['FULL'],
  endpoints: passkeyEndpoints,
  preconditions: {
    // docs/api.md §13: the RP ID must be a domain.
    unmet: (config) => {
      const { rpId } = config.webauthn;
      if (isIP(rpId) === 0) return null;
      return `WEBAUTHN_RP_ID must be a domain name (localhost works), not the IP address "${rpId}": passkeys need a domain; set WEBAUTHN_RP_ID or use a PUBLIC_URL with a host name`;
    },
  },
});
