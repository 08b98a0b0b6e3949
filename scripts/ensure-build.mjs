// `npm start` runs the built service: build first when dist/ is missing or older than src/.
import './check-node.mjs';
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = 'dist/src/main.js';
if (!existsSync(built) || statSync(built).mtimeMs < newest('src')) {
  console.log('gatehouse: building…');
  execSync('npm run build --silent', { stdio: 'inherit' });
}
