/**
 * The glue between commander and a command's module, shared by `cli/main.ts` and the per-area
 * declaration files in `cli/declare/`: a declaration names its module by a dynamic import, so
 * `agt --help` loads commander and nothing else.
 */
import type { Command } from 'commander';
import type { Ctx, GlobalOptions } from './context.js';

/** Runs a command with the context built from the global options; a number returned is the exit code. */
export function run<A extends unknown[]>(action: (ctx: Ctx, ...args: A) => Promise<number | void>) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const { contextOf } = await import('./context.js');
    const ctx = contextOf(command.optsWithGlobals() as GlobalOptions);
    const code = await action(ctx, ...(args.slice(0, -1) as A));
    if (typeof code === 'number') process.exitCode = code;
  };
}

/** Every command of the tree, depth first: each gets `exitOverride` so usage errors reach `main`. */
export function allCommands(root: Command): Command[] {
  return [root, ...root.commands.flatMap((command) => allCommands(command))];
}
