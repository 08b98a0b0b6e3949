// The oldest Node.js Gatehouse runs on, checked before anything else loads (main.ts and cli.ts
// import this first). Older 22.x releases crash in better-sqlite3's prebuilt binary (22.12: a
// segmentation fault at the first query) or cannot run the .ts sources at all (type stripping is
// on by default from 22.18). Kept equal to package.json `engines` and scripts/check-node.mjs by
// test/app/node-version.test.ts; CI runs a smoke test on exactly this version (.ci/run).
export const MINIMUM_NODE = '22.18.0';

/** True when `version` (`22.18.0`, `v24.1.0`) is at least MINIMUM_NODE. */
export function nodeVersionOk(version: string, minimum = MINIMUM_NODE): boolean {
  const have = version.replace(/^v/, '').split('.').map(Number);
  const need = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

if (!nodeVersionOk(process.versions.node)) {
  console.error(
    `gatehouse: Node.js ${MINIMUM_NODE} or newer is required, this is ${process.version} (Node 24 recommended)`,
  );
  process.exit(1);
}
