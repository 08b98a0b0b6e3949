// Run first by the npm scripts (pretest, predev, pregatehouse…; prestart through ensure-build.mjs):
// on a Node too old to strip types the entry file would fail with ERR_UNKNOWN_FILE_EXTENSION, so
// this plain-JS check says what is wrong first. Same minimum as src/node-version.ts (test-checked).
// When the Node on PATH is too old, `npm install` brought Node 24 (scripts/node-runtime.mjs) and
// npm scripts run on it: one line says so.
const MINIMUM_NODE = '22.18.0';
function older(version) {
  const have = version.split('.').map(Number);
  const need = MINIMUM_NODE.split('.').map(Number);
  return have[0] !== need[0]
    ? have[0] < need[0]
    : have[1] !== need[1]
      ? have[1] < need[1]
      : have[2] < need[2];
}
if (older(process.versions.node)) {
  console.error(
    `gatehouse: Node.js ${MINIMUM_NODE} or newer is required, this is ${process.version} (Node 24 recommended)`,
  );
  process.exit(1);
}
// npm names the Node that runs it (the one on PATH) in the user agent it gives scripts.
const npmNode = /\bnode\/v(\d+\.\d+\.\d+)/.exec(process.env.npm_config_user_agent ?? '')?.[1];
if (npmNode && older(npmNode)) {
  console.error(
    `gatehouse: Node.js v${npmNode} on PATH is older than ${MINIMUM_NODE}; running on Node.js ${process.version}, which npm install brought (node_modules/node)`,
  );
}
