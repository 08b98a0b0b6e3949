import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

// No container engine runs where the suite runs (docs/containers.md, "Why the image is not tested
// here"), so compose.yaml is checked as text: the gatehouse service's block, up to the next
// top-level key.
const compose = readFileSync(new URL('../../compose.yaml', import.meta.url), 'utf8');
const service = compose.slice(compose.indexOf('\n  gatehouse:'), compose.indexOf('\nvolumes:'));

describe('compose.yaml', () => {
  it('regression: passed only 8 variables, so OIDC, CORS, mail sender and invite-link settings in .env were ignored', () => {
    assert.match(service, /\n {4}env_file:\n {6}- path: \.env\n {8}required: false\n/);
    const environment = service
      .slice(service.indexOf('\n    environment:\n') + 1)
      .split('\n')
      .slice(1);
    const keys = [];
    for (const line of environment) {
      const m = /^ {6}([A-Z_]+):/.exec(line);
      if (!m) break;
      keys.push(m[1]);
    }
    // Only the container's own settings are set here; they win over .env.
    assert.deepEqual(keys, ['DATABASE_URL', 'HOST', 'PORT']);
  });

  it('regression: checks readiness (/health/detailed), not liveness, as the gatehouse health check', () => {
    /* ready-under-load: nothing told an operator when the service served requests; /health/detailed
       answers 200 only then (docs/operations.md, "Readiness"), and compose and the image check it. */
    const check = service.slice(service.indexOf('\n    healthcheck:\n'));
    assert.match(
      check,
      /\n {6}test: \["CMD", "node", "-e", "fetch\('http:\/\/127\.0\.0\.1:3000\/health\/detailed'\)/,
    );
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    assert.match(
      dockerfile,
      /\nHEALTHCHECK [^\n]*\\\n {2}CMD \["node", "-e", "fetch\('http:\/\/127\.0\.0\.1:'\+\(process\.env\.PORT\|\|3000\)\+'\/health\/detailed'\)/,
    );
  });
});
