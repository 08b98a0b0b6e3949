import { runCli } from './cli.ts';

// `npm start` and `node dist/src/main.js`: the serve command.
await runCli(['serve', ...process.argv.slice(2)]);
