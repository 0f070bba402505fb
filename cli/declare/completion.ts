/** `agt completion bash|zsh|fish`: generated from this very command tree. */
import type { Command } from 'commander';

export function declareCompletion(agt: Command): void {
  agt
    .command('completion <shell>')
    .description('print a shell completion script: bash, zsh or fish (eval "$(agt completion bash)")')
    .action(async (shell: string) => (await import('../commands/completion.js')).completion(agt, shell));
}
