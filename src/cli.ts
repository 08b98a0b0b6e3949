#!/usr/bin/env node
import './node-version.ts';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type CliCommand, CliError, commandHelp, commandList, UsageError, usageLine } from './cli/command.ts';
import { COMMANDS } from './cli/commands.ts';
import { ConfigError, loadConfig, readEnvironment } from './platform/config.ts';
import { quoted } from './platform/quoted.ts';

export { CliError } from './cli/command.ts';

/**
 * Runs one CLI command (`serve` when none is given). `--help`/`-h` anywhere prints help and
 * changes nothing; wrong arguments exit 2 before anything is opened; a failure exits 1 with one
 * line, without a stack trace.
 */
export async function runCli(argv: string[]): Promise<void> {
  const label = argv.find((a) => !a.startsWith('-')) ?? 'serve';
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
    // Loaded here only: the version is read from package.json, which no other command needs.
    const { VERSION } = await import('./platform/version.ts');
    console.log(`gatehouse ${VERSION}`);
    return;
  }
  try {
    const found = findCommand(argv);
    if (wantsHelp(argv)) {
      console.log(found.command ? commandHelp(found.command) : commandList(COMMANDS, found.group));
      return;
    }
    if (!found.command) {
      const list = commandList(COMMANDS, found.group);
      const name = found.group ? `${found.group} ${found.words[1] ?? ''}`.trim() : found.words[0];
      throw new UsageError(
        found.group && found.words.length < 2
          ? `${found.group} needs a command\n\n${list}`
          : `unknown command ${quoted(name ?? '')}\n\n${list}`,
      );
    }
    const { command, rest } = found;
    const { values, positionals } = parseCommandArgs(command, rest);
    const env = readEnvironment();
    const config = loadConfig(command.configEnv ? command.configEnv(env) : env);
    await command.run({ values, positionals, config, env });
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`gatehouse: ${err.message}`);
      process.exit(2);
    }
    if (err instanceof ConfigError) {
      // One line per wrong setting: all of them are fixed after one failed start.
      for (const line of err.message.split('\n')) console.error(`gatehouse: configuration error: ${line}`);
    } else if (err instanceof CliError) console.error(`gatehouse: ${err.message}`);
    else console.error(`gatehouse: ${label} failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

/** `--help` or `-h` before a `--` ends the options; `gatehouse help [command]` too. */
function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  return options.includes('--help') || options.includes('-h') || argv[0] === 'help';
}

interface Found {
  command: CliCommand | null;
  /** The group named (`users`) when no command of it matched. */
  group?: string;
  words: string[];
  rest: string[];
}

/** The command the leading words name (`users import` before `users`); none: `serve`. */
function findCommand(argv: string[]): Found {
  const args = argv[0] === 'help' ? argv.slice(1) : argv;
  const words: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-') || words.length === 2) break;
    words.push(arg);
  }
  if (words.length === 0) {
    // `gatehouse --port …` and `npm start -- …` mean serve; a bare `gatehouse --help` the list.
    if (argv[0] === 'help' || wantsHelp(argv)) return { command: null, words, rest: [] };
    return { command: byName('serve'), words, rest: args };
  }
  const two = words.length === 2 ? byName(`${words[0]} ${words[1]}`) : null;
  if (two) return { command: two, words, rest: args.slice(2) };
  const one = byName(words[0] ?? '');
  if (one) return { command: one, words, rest: args.slice(1) };
  const group = COMMANDS.some((c) => c.name.startsWith(`${words[0]} `)) ? words[0] : undefined;
  return { command: null, ...(group ? { group } : {}), words, rest: [] };
}

function byName(name: string): CliCommand | null {
  return COMMANDS.find((c) => c.name === name) ?? null;
}

/** node:util parseArgs, strict: unknown options, missing values and stray arguments are usage errors. */
function parseCommandArgs(command: CliCommand, args: string[]) {
  const declared = command.options ?? {};
  const options = Object.fromEntries(
    Object.entries(declared).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}) },
    ]),
  );
  const usage = `usage: ${usageLine(command)} (gatehouse ${command.name} --help for more)`;
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    // Node's messages name the option ("Unknown option '--force'"); its own hint is for scripts.
    const message = err instanceof Error ? err.message.split('. To specify')[0] : String(err);
    throw new UsageError(`${command.name}: ${message}\n${usage}`);
  }
  for (const [name, o] of Object.entries(declared)) {
    if (o.required && parsed.values[name] === undefined) {
      throw new UsageError(`${command.name} needs --${name} <${o.value ?? 'value'}>\n${usage}`);
    }
  }
  const declaredPositionals = command.positionals ?? [];
  const min = declaredPositionals.filter((p) => p.required).length;
  if (parsed.positionals.length < min || parsed.positionals.length > declaredPositionals.length) {
    const expected = declaredPositionals.map((p) => `<${p.name}>`).join(' ') || 'no arguments';
    throw new UsageError(
      `${command.name} takes ${expected}, got ${quoted(parsed.positionals.join(' '))}\n${usage}`,
    );
  }
  return parsed;
}

// Run when invoked as the `gatehouse` binary (not when imported by main.ts or tests).
const invoked = process.argv[1] ? realpathSync(process.argv[1]) : '';
if (invoked === fileURLToPath(import.meta.url)) await runCli(process.argv.slice(2));
