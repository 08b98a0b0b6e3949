// First: on a Node.js too old to run Gatehouse, one line and exit 1 before anything else loads.
import './node-version.ts';
import { enableCompileCache } from 'node:module';

// V8's compiled code of every module is kept on disk (os.tmpdir()/node-compile-cache) and reused by
// the next start: ~40 ms of a ~700 ms start (docs/benchmarks.md, "Start"). Node checks each entry
// against its module's source, and without a writable directory it simply compiles as before.
// Before the imports below, which are what it caches.
enableCompileCache();

// `npm start` and `node dist/src/main.js`: the serve command.
const { runCli } = await import('./cli.ts');
await runCli(['serve', ...process.argv.slice(2)]);
