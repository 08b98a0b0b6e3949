// The last step of `npm install` / `npm ci` (postinstall): which Node the npm scripts run on.
// Plain JavaScript that any Node runs (this may be an end-of-life one).
//
// - Node on PATH current (>= package.json `engines`): nothing changes. npm links the optional
//   dependency `node` (Node 24) into node_modules/.bin, which npm scripts put first on PATH, so
//   that link is removed and `npm start`, `npm test`… keep running on your Node.
// - Node on PATH older: npm start, npm test, npm run gatehouse… run on the Node 24 that this
//   install brought from the npm registry (the optional dependency `node`), linked as
//   node_modules/.bin/node; one line says so. better-sqlite3 loads its Node-API prebuild, which
//   any Node from 22 on runs (the ABI does not change between Node majors).
// - Node on PATH older and no Node 24 came (the optional dependency failed): the install fails
//   here with one line, rather than at the first `npm start`.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';

const minimum = JSON.parse(readFileSync('package.json', 'utf8')).engines.node.replace('>=', '');
// The Node that runs npm (the one on PATH); npm names it in the user agent it gives scripts.
const npmNode =
  /\bnode\/v(\d+\.\d+\.\d+)/.exec(process.env.npm_config_user_agent ?? '')?.[1] ?? process.versions.node;
const link = 'node_modules/.bin/node';
const target = '../node/bin/node';

function older(version, than) {
  const a = version.split('.').map(Number);
  const b = than.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

function linkIsOurs() {
  try {
    return lstatSync(link).isSymbolicLink() && readlinkSync(link) === target;
  } catch {
    return false;
  }
}

if (!older(npmNode, minimum)) {
  if (linkIsOurs()) unlinkSync(link);
  process.exit(0);
}

const bundled = 'node_modules/node/bin/node';
const probe = existsSync(bundled) ? spawnSync(bundled, ['--version'], { encoding: 'utf8' }) : undefined;
const bundledVersion = probe?.status === 0 ? probe.stdout.trim().replace(/^v/, '') : undefined;
if (!bundledVersion || older(bundledVersion, minimum)) {
  console.error(
    `gatehouse: Node.js ${minimum} or newer is required, this is v${npmNode}, and npm install could not bring Node 24 (optional dependency "node"): install Node 24 and run npm install again`,
  );
  process.exit(1);
}
if (!linkIsOurs()) {
  try {
    unlinkSync(link);
  } catch {}
  symlinkSync(target, link);
}
console.log(
  `gatehouse: Node.js v${npmNode} is older than ${minimum}: npm start, npm test and the other npm scripts run on Node.js v${bundledVersion}, which npm install brought (node_modules/node)`,
);
