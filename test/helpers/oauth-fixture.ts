/**
 * The OAuth-protected MCP server with its authorization server (test/fixtures/mcp/oauth-server.mjs, the SDK's
 * server half) as a child process of the test, killed at its teardown; resolves with the URLs its first line
 * prints once it listens.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startOAuthFixture(t: Teardown): Promise<{ mcp: string; issuer: string }> {
  const fixture = spawn(process.execPath, [join(ROOT, 'test/fixtures/mcp/oauth-server.mjs')], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const gone = new Promise((done) => fixture.once('exit', done));
  // Also when the file fails before tap's teardowns run: a leftover server would hold the runner's pipes.
  process.once('exit', () => fixture.kill('SIGKILL'));
  t.teardown(async () => {
    fixture.kill('SIGKILL');
    await gone;
  });
  return new Promise((done, fail) => {
    let text = '';
    fixture.stdout!.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) done(JSON.parse(text.slice(0, text.indexOf('\n'))));
    });
    fixture.once('exit', () => fail(new Error('the OAuth fixture server exited before listening')));
  });
}
