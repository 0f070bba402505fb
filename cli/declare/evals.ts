/** `agt eval …`: an agent's behaviour tested like code (docs/evals.md). */
import type { Command } from 'commander';
import { run } from '../run.js';

const evals = () => import('../commands/evals.js');
const collect = (value: string, previous: string[] = []) => [...previous, value];

export function declareEvals(agt: Command): void {
  const ev = agt
    .command('eval')
    .alias('evals')
    .description("test an agent's behaviour: capture cases from its history, run suites on throwaway copies");
  ev.command('capture <agent>')
    .description("write eval cases from the agent's newest turns (JSON; stdout unless -o)")
    .option('-n, --turns <n>', 'the newest N turns (default 1)')
    .option('--since <time>', 'only turns begun since then (ISO 8601)')
    .option('--loop <name>', 'cognition loop (default main)')
    .option('-o, --output <file>', 'write the suite to this file')
    .action(
      run(async (ctx, agent: string, options: { turns?: string; since?: string; loop?: string; output?: string }) =>
        (await evals()).capture(ctx, agent, options),
      ),
    );
  ev.command('run <suite>')
    .description('run a suite on copies of an agent (never the live one); exit 1 unless every case passed')
    .requiredOption('-a, --agent <agent>', 'a loaded agent (id, handle or name) or an agent file (.agt)')
    .option('-m, --model <provider/model>', 'run every case on this model too, side by side (repeatable)', collect)
    .option('--instructions-file <file>', 'run every case with these instructions too, side by side')
    .option('-r, --repeat <n>', 'run each case N times (flaky cases show)')
    .option('--live-tools', 'run the real tools in their sandboxes instead of replaying the recorded results')
    .option('-c, --concurrency <n>', 'cases at once (default 2, at most 8)')
    .option('--junit <file>', 'write JUnit XML (for CI)')
    .option('-o, --output <file>', 'write the run as JSON')
    .action(
      run(async (ctx, suite: string, options: Parameters<Awaited<ReturnType<typeof evals>>['runSuite']>[2]) =>
        (await evals()).runSuite(ctx, suite, options),
      ),
    );
  ev.command('ls')
    .alias('list')
    .description('eval runs kept, newest first')
    .action(run(async (ctx) => (await evals()).list(ctx)));
  ev.command('show <run>')
    .description('one run with its failures')
    .option('--junit <file>', 'write JUnit XML')
    .option('-o, --output <file>', 'write the run as JSON')
    .action(
      run(async (ctx, id: string, options: { junit?: string; output?: string }) =>
        (await evals()).show(ctx, id, options),
      ),
    );
  ev.command('cancel <run>')
    .description('cancel a running run')
    .action(run(async (ctx, id: string) => (await evals()).cancel(ctx, id)));
  ev.command('diff <runA> <runB>')
    .description('the answers of two runs side by side, case by case')
    .action(run(async (ctx, a: string, b: string) => (await evals()).diff(ctx, a, b)));
}
