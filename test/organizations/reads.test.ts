import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator } from 'kysely/migration';
import { v7 as uuidv7 } from 'uuid';
import {
  globalRolesOf,
  holdsPermission,
  membershipIn,
  membershipsOf,
  permissionsOf,
} from '../../src/modules/organizations/index.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

// The reads other features code against (src/modules/organizations/index.ts) and the migration
// that makes the tables: seeded roles, cascades, and the way down and up again.

for (const dialect of DIALECTS) {
  describe(`organizations: tables and reads [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('seeds owner (the three org: permissions) and member (none)', async () => {
      const rows = await t.ctx.db.selectFrom('roles').selectAll().orderBy('name').execute();
      assert.deepEqual(
        rows.map((r) => [r.name, JSON.parse(r.permissions)]),
        [
          ['member', []],
          ['owner', ['org:members:read', 'org:members:manage', 'org:settings:manage']],
        ],
      );
      assert.deepEqual(await permissionsOf(t.ctx, ['owner', 'member', 'nope']), [
        'org:members:manage',
        'org:members:read',
        'org:settings:manage',
      ]);
      assert.deepEqual(await permissionsOf(t.ctx, []), []);
      assert.deepEqual(await permissionsOf(t.ctx, ['unknown']), []);
    });

    it('reads global roles, memberships and permissions per organization only', async () => {
      const db = t.ctx.db;
      const u = await createUser(t);
      const other = await createUser(t);
      const now = Date.now();
      const a = { id: uuidv7(), slug: `a-${now}`, name: 'A' };
      const b = { id: uuidv7(), slug: `b-${now}`, name: 'B' };
      for (const o of [a, b]) {
        await db
          .insertInto('organizations')
          .values({
            ...o,
            join_by_domain: 0,
            default_roles: '["member"]',
            require_mfa: o === b ? 1 : 0,
            metadata: '{}',
            member_count: 0,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      await db.insertInto('user_roles').values({ user_id: u.id, role: 'member' }).execute();
      await db
        .insertInto('organization_members')
        .values([
          { organization_id: a.id, user_id: u.id, joined_at: now },
          { organization_id: b.id, user_id: u.id, joined_at: now },
          { organization_id: b.id, user_id: other.id, joined_at: now },
        ])
        .execute();
      await db
        .insertInto('organization_member_roles')
        .values([
          { organization_id: a.id, user_id: u.id, role: 'owner' },
          { organization_id: a.id, user_id: u.id, role: 'member' },
          { organization_id: b.id, user_id: other.id, role: 'owner' },
        ])
        .execute();

      assert.deepEqual(await globalRolesOf(t.ctx, u.id), ['member']);
      assert.deepEqual(await globalRolesOf(t.ctx, other.id), []);
      assert.deepEqual(await membershipsOf(t.ctx, u.id), [
        { id: a.id, slug: a.slug, name: 'A', roles: ['member', 'owner'], require_mfa: false },
        { id: b.id, slug: b.slug, name: 'B', roles: [], require_mfa: true },
      ]);
      assert.deepEqual(await membershipIn(t.ctx, b.id, u.id), {
        id: b.id,
        slug: b.slug,
        name: 'B',
        roles: [],
        require_mfa: true,
      });
      assert.equal(await membershipIn(t.ctx, a.id, other.id), null);
      assert.equal(await holdsPermission(t.ctx, a.id, u.id, 'org:members:manage'), true);
      // Roles held in A do not count in B (tenancy), and a non-member holds nothing.
      assert.equal(await holdsPermission(t.ctx, b.id, u.id, 'org:members:manage'), false);
      assert.equal(await holdsPermission(t.ctx, a.id, other.id, 'org:members:read'), false);

      // A member's roles go with the membership; an organization's rows go with it.
      await db
        .deleteFrom('organization_members')
        .where('organization_id', '=', a.id)
        .where('user_id', '=', u.id)
        .execute();
      const left = await db
        .selectFrom('organization_member_roles')
        .selectAll()
        .where('organization_id', '=', a.id)
        .execute();
      assert.deepEqual(left, []);
      await db.deleteFrom('organizations').where('id', '=', b.id).execute();
      assert.deepEqual(await membershipsOf(t.ctx, u.id), []);
      assert.deepEqual(await membershipsOf(t.ctx, other.id), []);
    });

    it('goes down and up again', async () => {
      const migrator = new Migrator({
        db: t.ctx.db,
        provider: { getMigrations: async () => migrations },
        migrationTableName: 'gatehouse_migrations',
        migrationLockTableName: 'gatehouse_migrations_lock',
      });
      assert.equal((await migrator.migrateTo('20261202080000_oauth_clients_pkce')).error, undefined);
      await assert.rejects(t.ctx.db.selectFrom('roles').selectAll().execute());
      assert.equal((await migrator.migrateToLatest()).error, undefined);
      assert.equal((await t.ctx.db.selectFrom('roles').selectAll().execute()).length, 2);
    });
  });
}
