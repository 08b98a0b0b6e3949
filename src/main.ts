// First: on a Node.js too old to run Gatehouse, one line and exit 1 before anything else loads.
import './node-version.ts';
// `npm start` and `node dist/src/main.js`: the serve command.
import { runCli } from './cli.ts';

await runCli(['serve', ...process.argv.slice(2)]);
