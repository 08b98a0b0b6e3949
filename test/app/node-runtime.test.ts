// scripts/node-runtime.mjs (npm install's postinstall) and scripts/check-node.mjs (each npm script's
// first step) on the three machines the README names: a current Node, an old Node that got Node 24
// from npm install, and an old Node that did not. The Node running npm is the one npm names in
// npm_config_user_agent; here the test sets it, and a copy of this Node stands in for Node 24.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const OLD_AGENT = 'npm/10.8.2 node/v20.20.2 linux x64 workspaces/false';
const CURRENT_AGENT = `npm/11.19.1 node/${process.version} linux x64 workspaces/false`;

/** A project directory with the engines of package.json and, if asked, a "Node 24" linked by npm. */
function project(withBundledNode: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-node-runtime-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ engines: { node: '>=22.18.0' } }));
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  if (withBundledNode) {
    mkdirSync(join(dir, 'node_modules', 'node', 'bin'), { recursive: true });
    symlinkSync(process.execPath, join(dir, 'node_modules', 'node', 'bin', 'node'));
    // What npm does for the optional dependency's `bin`.
    symlinkSync('../node/bin/node', join(dir, 'node_modules', '.bin', 'node'));
  }
  return dir;
}

function run(script: string, cwd: string, agent: string) {
  const result = spawnSync(process.execPath, [join(SCRIPTS, script)], {
    cwd,
    env: { PATH: process.env.PATH ?? '', npm_config_user_agent: agent },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const linked = (dir: string) => {
  const link = join(dir, 'node_modules', '.bin', 'node');
  try {
    return lstatSync(link).isSymbolicLink() ? readlinkSync(link) : 'a file';
  } catch {
    return null;
  }
};

describe('the Node the npm scripts run on', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a current Node: npm install removes the link to the bundled Node, and the scripts say nothing', () => {
    const dir = project(true);
    dirs.push(dir);
    const install = run('node-runtime.mjs', dir, CURRENT_AGENT);
    assert.equal(install.code, 0, install.stderr);
    assert.equal(install.stdout + install.stderr, '');
    assert.equal(linked(dir), null, 'npm scripts find the Node on PATH');
    const check = run('check-node.mjs', dir, CURRENT_AGENT);
    assert.deepEqual([check.code, check.stderr], [0, '']);
  });

  it('regression: on the system Node 20, npm start stopped with "22.18.0 or newer is required"; npm install now keeps Node 24 for the scripts and says so', () => {
    const dir = project(true);
    dirs.push(dir);
    rmSync(join(dir, 'node_modules', '.bin', 'node'));
    const install = run('node-runtime.mjs', dir, OLD_AGENT);
    assert.equal(install.code, 0, install.stderr);
    assert.equal(
      install.stdout,
      `gatehouse: Node.js v20.20.2 is older than 22.18.0: npm start, npm test and the other npm scripts run on Node.js ${process.version}, which npm install brought (node_modules/node)\n`,
    );
    assert.equal(linked(dir), '../node/bin/node', 'the link is (re)made');
    // Each npm script's first step then runs on that Node and says so in one line.
    const check = run('check-node.mjs', dir, OLD_AGENT);
    assert.equal(check.code, 0);
    assert.equal(
      check.stderr,
      `gatehouse: Node.js v20.20.2 on PATH is older than 22.18.0; running on Node.js ${process.version}, which npm install brought (node_modules/node)\n`,
    );
  });

  it('an old Node that got no Node 24: npm install itself fails with one line', () => {
    const dir = project(false);
    dirs.push(dir);
    const install = run('node-runtime.mjs', dir, OLD_AGENT);
    assert.equal(install.code, 1);
    assert.equal(
      install.stderr,
      'gatehouse: Node.js 22.18.0 or newer is required, this is v20.20.2, and npm install could not bring Node 24 (optional dependency "node"): install Node 24 and run npm install again\n',
    );
    assert.equal(existsSync(join(dir, 'node_modules', '.bin', 'node')), false);
  });

  it('npm test -- <files> runs only those files', () => {
    const dir = project(false);
    dirs.push(dir);
    mkdirSync(join(dir, 'test'));
    writeFileSync(
      join(dir, 'test', 'one.test.mjs'),
      "import { it } from 'node:test'; it('one', () => {});\n",
    );
    writeFileSync(
      join(dir, 'test', 'two.test.mjs'),
      "import { it } from 'node:test'; it('two', () => {});\n",
    );
    copyFileSync(join(SCRIPTS, 'test.mjs'), join(dir, 'test.mjs'));
    const result = spawnSync(process.execPath, ['test.mjs', 'test/one.test.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      // Not as a subtest of this run (NODE_TEST_CONTEXT): the inner runner reports on its own.
      env: { PATH: process.env.PATH ?? '' },
    });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /ℹ tests 1\n/);
    assert.match(result.stdout, /one/);
    assert.doesNotMatch(result.stdout, /\btwo\b/);
  });
});
