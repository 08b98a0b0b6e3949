import type { Config } from '../platform/config.ts';

/** One option of a command: a `node:util` parseArgs option plus what its help says. */
export interface CliOption {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Placeholder of a string option's value in the help, e.g. `address` → `--email <address>`. */
  readonly value?: string;
  readonly description: string;
  /** A missing required option is a usage error (exit 2) before anything is opened. */
  readonly required?: boolean;
}

/** A positional argument; all required ones come first. */
export interface CliPositional {
  readonly name: string;
  readonly description: string;
  readonly required?: boolean;
}

type Env = Record<string, string | undefined>;

/** The parsed values of a command's options: a boolean or a string per option, typed by its declaration. */
export type OptionValues<O extends Record<string, CliOption>> = {
  [K in keyof O]?: O[K]['type'] extends 'boolean'
    ? boolean
    : O[K]['type'] extends 'string'
      ? string
      : string | boolean;
};

/** What a command's `run` receives once its arguments parsed and the configuration loaded. */
export interface CliInput<O extends Record<string, CliOption>> {
  readonly values: OptionValues<O>;
  readonly positionals: readonly string[];
  readonly config: Config;
  /** The environment the configuration was read from (.env under the real environment). */
  readonly env: Env;
}

/**
 * A CLI command. `name` is one word (`migrate`) or a group and a word (`users import`). Its
 * arguments are parsed strictly by `node:util` parseArgs before the configuration is loaded or
 * anything is opened: `--help`/`-h` anywhere prints its help and `run` never starts; an unknown
 * option, a missing value or a wrong number of positionals is a usage error (exit 2).
 * To add one: a file in src/cli/ exporting `defineCommand({...})`, listed in src/cli/commands.ts.
 */
export interface CliCommand<O extends Record<string, CliOption> = Record<string, CliOption>> {
  readonly name: string;
  /** One line, for the command list. */
  readonly summary: string;
  /** More lines for `gatehouse <name> --help`. */
  readonly details?: string;
  readonly options?: O;
  readonly positionals?: readonly CliPositional[];
  /** The environment the configuration is loaded from, when a command needs it changed. */
  readonly configEnv?: (env: Env) => Env;
  run(input: CliInput<O>): Promise<void>;
}

/** Declares a command with its option values typed from its options. */
export function defineCommand<const O extends Record<string, CliOption>>(command: CliCommand<O>): CliCommand {
  return command as unknown as CliCommand;
}

/** A failure the CLI reports in one line, without a stack trace (exit 1). */
export class CliError extends Error {}

/** Wrong arguments: reported with the command's usage line, exit 2, nothing opened. */
export class UsageError extends Error {}

/** `users import [options] <file>`: the first line of a command's help. */
export function usageLine(command: CliCommand): string {
  const options = Object.values(command.options ?? {}).some((o) => !o.required) ? ' [options]' : '';
  const positionals = (command.positionals ?? [])
    .map((p) => (p.required ? ` <${p.name}>` : ` [${p.name}]`))
    .join('');
  const required = Object.entries(command.options ?? {})
    .filter(([, o]) => o.required)
    .map(([name, o]) => ` --${name} <${o.value ?? 'value'}>`)
    .join('');
  return `gatehouse ${command.name}${required}${options}${positionals}`;
}

/** The whole help of one command. */
export function commandHelp(command: CliCommand): string {
  const lines = [`Usage: ${usageLine(command)}`, '', command.summary];
  if (command.details) lines.push('', command.details);
  const positionals = command.positionals ?? [];
  if (positionals.length > 0) {
    lines.push('', 'Arguments:');
    for (const p of positionals) lines.push(`  ${pad(p.name)}${p.description}`);
  }
  lines.push('', 'Options:');
  for (const [name, o] of Object.entries(command.options ?? {})) {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`;
    lines.push(`  ${pad(flag)}${o.description}${o.required ? ' (required)' : ''}`);
  }
  lines.push(`  ${pad('-h, --help')}print this help and change nothing`);
  lines.push('', 'Configuration comes from the environment and ./.env (docs/configuration.md).');
  return lines.join('\n');
}

/** The list of commands, for `gatehouse --help` (or only those of one group: `gatehouse users --help`). */
export function commandList(commands: readonly CliCommand[], group?: string): string {
  const shown = group ? commands.filter((c) => c.name.startsWith(`${group} `)) : commands;
  const lines = [`Usage: gatehouse ${group ? `${group} <command>` : '<command>'} [options]`, '', 'Commands:'];
  for (const c of shown) lines.push(`  ${pad(c.name, 22)}${c.summary}`);
  lines.push(
    '',
    `Run "gatehouse <command> --help" for a command's options; --help never changes anything.`,
    'gatehouse --version prints the version.',
    'Configuration comes from the environment and ./.env (docs/configuration.md).',
  );
  return lines.join('\n');
}

function pad(text: string, width = 26): string {
  return text.length >= width ? `${text}  ` : text.padEnd(width);
}
