import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MINIMUM_NODE, nodeVersionOk } from '../../src/node-version.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the Node.js minimum: an older Node stops with one line', () => {
  it('regression: README said 22.12, on which the service crashed; one minimum everywhere', () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    assert.equal(engines, `>=${MINIMUM_NODE}`);
    assert.match(read('scripts/check-node.mjs'), new RegExp(`MINIMUM_NODE = '${MINIMUM_NODE}'`));
    assert.match(read('README.md'), new RegExp(`Node\\.js ≥ ${MINIMUM_NODE.replaceAll('.', '\\.')}`));
    // CI installs exactly the version engines names and runs the smoke test on it.
    assert.match(read('.ci/run'), /engines\.node/);
  });

  it('compares versions numerically', () => {
    assert.equal(nodeVersionOk('22.18.0', '22.18.0'), true);
    assert.equal(nodeVersionOk('v22.18.1', '22.18.0'), true);
    assert.equal(nodeVersionOk('22.17.9', '22.18.0'), false);
    assert.equal(nodeVersionOk('22.12.0', '22.18.0'), false);
    assert.equal(nodeVersionOk('22.100.0', '22.18.0'), true);
    assert.equal(nodeVersionOk('24.0.0', '22.18.0'), true);
    assert.equal(nodeVersionOk('20.20.2', '22.18.0'), false);
    assert.equal(nodeVersionOk(process.versions.node), true, 'the Node running the tests is supported');
  });
});
