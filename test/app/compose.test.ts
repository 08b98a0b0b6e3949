import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

// compose.yaml is checked as text (the suite runs no container engine; the image itself is built
// and run by scripts/container-ci.sh in CI, docs/containers.md): the gatehouse service's block, up
// to the next top-level key.
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

  it('the health check asks the port the service listens on, and the service waits for a healthy database', () => {
    // A check on another port than PORT never passes: the container would stay "starting", then
    // "unhealthy", while it serves.
    assert.match(service, /\n {6}PORT: "3000"\n/);
    const test = /\n {6}test: (\[.*\])\n/.exec(service.slice(service.indexOf('\n    healthcheck:\n')))?.[1];
    assert.ok(test);
    const [, , , script] = JSON.parse(test) as string[];
    assert.match(
      script ?? '',
      /^fetch\('http:\/\/127\.0\.0\.1:3000\/health\/detailed'\)\.then\(r=>process\.exit\(r\.ok\?0:1\),\(\)=>process\.exit\(1\)\)$/,
    );
    assert.match(service, /\n {4}depends_on:\n {6}postgres:\n {8}condition: service_healthy\n/);
  });

  it('the Dockerfile builds every stage on one base, node:24-slim unless BASE says otherwise', () => {
    /* CI builds this same Dockerfile on a base of its own (scripts/container-ci.sh,
       --build-arg BASE=localhost/…): a stage pinned to another image would escape that test. */
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    assert.match(dockerfile, /\nARG BASE=node:24-slim\n/);
    const froms = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    assert.deepEqual(
      froms.map((l) => l.replace('$' + '{BASE}', 'BASE')),
      ['FROM BASE AS build', 'FROM BASE AS deps', 'FROM BASE AS runtime'],
    );
    assert.match(dockerfile, /\nUSER node\n/);
  });
});
