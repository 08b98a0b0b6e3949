import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';

describe('organizations: configuration', () => {
  it('defaults: no self-service, creators get owner', () => {
    const c = loadConfig({});
    assert.equal(c.organizations.selfService, false);
    assert.deepEqual(c.organizations.creatorRoles, ['owner']);
  });

  it('reads ORGANIZATIONS_SELF_SERVICE and a comma list of creator roles', () => {
    const c = loadConfig({
      ORGANIZATIONS_SELF_SERVICE: 'true',
      ORGANIZATIONS_CREATOR_ROLES: ' owner , billing,owner ',
    });
    assert.equal(c.organizations.selfService, true);
    assert.deepEqual(c.organizations.creatorRoles, ['owner', 'billing']);
  });

  it('refuses a creator role that cannot be a role name, naming the variable', () => {
    for (const bad of ['admin', 'Owner', 'owner,user', 'a b']) {
      assert.throws(
        () => loadConfig({ ORGANIZATIONS_CREATOR_ROLES: bad }),
        (err: unknown) => err instanceof ConfigError && err.message.includes('ORGANIZATIONS_CREATOR_ROLES'),
        bad,
      );
    }
  });
});
