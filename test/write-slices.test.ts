/**
 * kernel/write-slices.ts: the daemon's bulk writes (group commits, absorbed chats) take one slice per
 * event-loop turn, in the order asked, whoever asks.
 */
import t from 'tap';
import { nextWriteSlice } from '../kernel/write-slices.js';

t.test('waiters are released one per event-loop turn, in order', async (t) => {
  let turn = 0;
  const released: Array<[string, number]> = [];
  const waits = ['a1', 'b1', 'c1', 'a2'].map((name) => nextWriteSlice().then(() => released.push([name, turn])));
  const counter = (async () => {
    for (let i = 0; i < 8; i++) {
      await new Promise((done) => setImmediate(done));
      turn++;
    }
  })();
  await Promise.all(waits);
  await counter;
  t.same(
    released.map(([name]) => name),
    ['a1', 'b1', 'c1', 'a2'],
    'in the order asked',
  );
  t.equal(new Set(released.map(([, at]) => at)).size, 4, 'each in an event-loop turn of its own');
});

t.test('a waiter asked for while releasing goes after the ones already waiting', async (t) => {
  const order: string[] = [];
  const first = nextWriteSlice().then(() => {
    order.push('first');
    return nextWriteSlice().then(() => order.push('first again'));
  });
  const second = nextWriteSlice().then(() => order.push('second'));
  await Promise.all([first, second]);
  t.same(order, ['first', 'second', 'first again']);
});
