// The command line of the bench scripts that measure builds in turns (compare.ts, ab-sizing.ts,
// rss-phases.ts): numeric options and flags taken out of the arguments, then what remains read as
// `<build dir>[:NAME=value,…]`, each a directory holding dist/src/main.js with settings of its own.
import { resolve } from 'node:path';

export interface Build {
  /** The build's directory, absolute. */
  dir: string;
  /** Settings for this build only. */
  env: Record<string, string>;
  /** How the figures name it: the directory's last part and its settings. */
  name: string;
}

export function buildArgs(argv: string[]) {
  const args = [...argv];
  return {
    option(name: string, def: number): number {
      const i = args.indexOf(name);
      if (i < 0) return def;
      const value = Number(args[i + 1]);
      args.splice(i, 2);
      return value;
    },
    flag(name: string): boolean {
      const i = args.indexOf(name);
      if (i >= 0) args.splice(i, 1);
      return i >= 0;
    },
    /** What is left once the options are taken: the builds (`fallback` when none is given). */
    builds(fallback: string[] = []): Build[] {
      return (args.length > 0 ? args : fallback).map((arg) => {
        const [dir = '.', settings = ''] = arg.split(':');
        const env = Object.fromEntries(
          settings
            .split(',')
            .filter(Boolean)
            .map((pair) => pair.split('=') as [string, string]),
        );
        return {
          dir: resolve(dir),
          env,
          name: `${dir.split('/').pop() ?? dir}${settings ? ` ${settings}` : ''}`,
        };
      });
    },
  };
}
