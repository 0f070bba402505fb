/**
 * The guide's extension, tested the way a third-party author would: against fake kernel services
 * (`startTestExtension`, fast) and once inside the real daemon (`startTestDaemon`).
 */
import { startTestDaemon, startTestExtension } from '@agt/contracts/testing';
import t from 'tap';
import { fileURLToPath } from 'node:url';
import hello from '../src/index.js';

t.test('routes, agent route and tool, against fake kernel services', async (t) => {
  const ext = await startTestExtension(hello, { config: { greeting: 'hey' }, agents: [{ id: 'a1', name: 'scout' }] });
  t.teardown(ext.stop);
  t.equal(ext.state, 'started');

  t.same((await ext.request('GET', '/hello')).body, { greeting: 'hey', greetings: [] });
  const added = await ext.request('POST', '/hello/greetings', { text: 'good morning' });
  t.equal(added.status, 201);
  t.same(added.body, { id: 1, text: 'good morning' });
  t.same((await ext.request('GET', '/hello/greetings/1')).body, { id: 1, text: 'good morning' });

  const missing = await ext.request('GET', '/hello/greetings/7');
  t.equal(missing.status, 404);
  t.same(missing.body, { error: 'no greeting 7', code: 'not_found' });
  const empty = await ext.request('POST', '/hello/greetings', { text: '' });
  t.equal(empty.status, 400);
  t.equal(empty.body.code, 'bad_request');

  t.same((await ext.request('GET', '/agents/a1/hello')).body, { agentId: 'a1', greeting: 'hey, scout' });
  t.equal((await ext.request('GET', '/agents/nobody/hello')).status, 404);

  const [tools] = ext.contributions.tools;
  const [say] = await tools!.toolsFor('a1');
  t.equal(say!.name, 'hello_say');
  t.same(await say!.run({}, {} as never), { content: 'hey' });
  t.ok(
    ext.logs.some((line) => line.msg === 'greeting added' && line.bindings.extension === 'hello'),
    'logged through ctx.logger',
  );
});

t.test('the default greeting comes from the options schema; a bad config fails it with 503s', async (t) => {
  const plain = await startTestExtension(hello);
  t.teardown(plain.stop);
  t.equal((await plain.request('GET', '/hello')).body.greeting, 'hi');

  const bad = await startTestExtension(hello, { config: { greting: 'typo' } });
  t.teardown(bad.stop);
  t.equal(bad.state, 'failed');
  const res = await bad.request('GET', '/hello');
  t.equal(res.status, 503);
  t.match(res.body, { code: 'unavailable', extension: 'hello', error: /extension hello is failed: invalid config/ });
});

t.test('inside the real daemon', async (t) => {
  const daemon = await startTestDaemon({
    extensions: [
      { module: fileURLToPath(new URL('../src/index.ts', import.meta.url)), config: { greeting: 'hello there' } },
    ],
  });
  t.teardown(daemon.stop);
  t.match((await daemon.request('GET', '/runtime/extensions/hello')).body, {
    name: 'hello',
    state: 'started',
    error: null,
  });
  t.same((await daemon.request('GET', '/hello')).body, { greeting: 'hello there', greetings: [] });
  t.equal((await daemon.request('POST', '/hello/greetings', { text: 'hi' })).status, 201);
  t.equal((await daemon.request('GET', '/hello/greetings/9')).body.code, 'not_found');
  t.equal((await fetch(`${daemon.url}/hello`)).status, 401, 'behind the daemon token');
});
