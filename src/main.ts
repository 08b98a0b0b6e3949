// `npm start` and `node dist/src/main.js`: the serve command.
import { runCli } from './cli.ts';

await runCli(['serve', ...process.argv.slice(2)]);
