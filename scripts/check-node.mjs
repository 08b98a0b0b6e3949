// Preloaded by the npm scripts that run .ts sources (`node --import ./scripts/check-node.mjs …`):
// on a Node too old to strip types the entry file would fail with ERR_UNKNOWN_FILE_EXTENSION, so
// this plain-JS check says what is wrong first. Same minimum as src/node-version.ts (test-checked).
const MINIMUM_NODE = '22.18.0';
const have = process.versions.node.split('.').map(Number);
const need = MINIMUM_NODE.split('.').map(Number);
const older =
  have[0] !== need[0] ? have[0] < need[0] : have[1] !== need[1] ? have[1] < need[1] : have[2] < need[2];
if (older) {
  console.error(
    `gatehouse: Node.js ${MINIMUM_NODE} or newer is required, this is ${process.version} (Node 24 recommended)`,
  );
  process.exit(1);
}
