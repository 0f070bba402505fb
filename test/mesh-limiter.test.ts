/**
 * The mesh server's rate limits (extensions/mesh/rate-limit.ts), unit level with an
 * explicit clock: a limited sender stays limited however many other senders come (the table is bounded,
 * running windows are never dropped, the rest share an overflow window); ended windows make room;
 * IPv6 requesters count per /64; the whole-inbox rate of an agent over all its senders.
 */
import t from 'tap';
import { senderKey, inboxOfSenderKey } from '../extensions/mesh/inbound.js';
import { addressBucket, RateLimiter } from '../extensions/mesh/rate-limit.js';

const WINDOW = 60_000;

t.test('10,000+ other senders do not make a limited sender forget its window', async (t) => {
  const limiter = new RateLimiter({ limit: 3, windowMs: WINDOW, maxKeys: 10_000 });
  let now = 1_000;
  for (let i = 0; i < 3; i++) t.equal(limiter.take('limited', now), 0, `allowance ${i + 1}`);
  t.equal(limiter.take('limited', now), 60, 'the 4th in the window waits for the window to end');
  let refusedNew = 0;
  for (let i = 0; i < 12_000; i++) {
    now += 1;
    if (limiter.take(`sender-${i}`, now) > 0) refusedNew++;
  }
  t.equal(limiter.size, 10_000, 'the table stays at its bound');
  t.equal(limiter.take('limited', now), 48, 'still limited, with the wait of its own window');
  t.equal(refusedNew, 2_001 - 3, 'the 2,001 senders that did not fit share one overflow window of 3');
  t.ok(limiter.take('sender-5', now) === 0, 'a sender that got its own window keeps its allowance');

  // At 61,005 the windows of 'limited' (1,000) and sender-0..4 (1,001..1,005) have ended.
  now = 1_000 + WINDOW + 5;
  t.equal(limiter.take('limited', now), 0, 'once its window has ended it may go on');
  t.equal(limiter.take('brand-new', now), 0, 'ended windows make room for a new sender');
  t.equal(limiter.size, 9_996, 'six ended windows dropped (10,000 - 6), two added');
});

t.test('ended windows are dropped from the front, running ones never', async (t) => {
  const limiter = new RateLimiter({ limit: 1, windowMs: WINDOW, maxKeys: 100 });
  for (let i = 0; i < 100; i++) limiter.take(`early-${i}`, i);
  t.equal(limiter.take('late', 50), 0, 'full of running windows: the newcomer counts in the overflow window');
  t.ok(limiter.take('late-2', 51) > 0, 'which it shares with the next newcomer');
  // At 60,010 the first eleven windows (started 0..10) have ended; the others still run.
  t.equal(limiter.take('late', 60_010), 0, 'room from ended windows');
  t.equal(limiter.size, 90, 'eleven ended windows dropped, the new one added');
  for (let i = 11; i < 100; i++) t.ok(limiter.take(`early-${i}`, 60_010) > 0, `early-${i} is still limited`);
});

t.test('IPv6 requesters count per /64, IPv4 per address', async (t) => {
  const same = [
    '2001:db8:1:2::1',
    '2001:db8:1:2:ffff:ffff:ffff:ffff',
    '2001:0DB8:0001:0002:0:0:0:0',
    '2001:db8:1:2::7%eth0',
    '2001:db8:1:2:a:b:1.2.3.4',
  ];
  for (const address of same) t.equal(addressBucket(address), '2001:db8:1:2::/64', address);
  t.equal(addressBucket('2001:db8:1:3::1'), '2001:db8:1:3::/64', 'the next /64 is another bucket');
  t.equal(addressBucket('::1'), '0:0:0:0::/64');
  t.equal(addressBucket('fe80::1'), 'fe80:0:0:0::/64');
  t.equal(addressBucket('::ffff:192.0.2.7'), '192.0.2.7', 'IPv4-mapped is the IPv4 address');
  t.equal(addressBucket('::ffff:c000:207'), '192.0.2.7', 'also in hex');
  t.equal(addressBucket('192.0.2.7'), '192.0.2.7');
  t.not(addressBucket('192.0.2.8'), addressBucket('192.0.2.7'), 'IPv4 addresses are not grouped');
  for (const bad of [undefined, '', 'not an address', '1.2.3.4.5']) t.equal(addressBucket(bad), '?', String(bad));

  const limiter = new RateLimiter({ limit: 5, windowMs: WINDOW, bucketOf: addressBucket });
  let allowed = 0;
  for (let i = 0; i < 50; i++) if (limiter.take(`2001:db8:1:2::${(i + 1).toString(16)}`, 0) === 0) allowed++;
  t.equal(allowed, 5, '50 addresses of one /64 share the allowance of 5');
  t.equal(limiter.take('2001:db8:1:3::1', 0), 0, 'another /64 has its own');
  t.equal(limiter.size, 2);
});

t.test('the whole-inbox rate: all senders of one agent together', async (t) => {
  const limiter = new RateLimiter({ limit: 2, windowMs: WINDOW, group: { of: inboxOfSenderKey, limit: 5 } });
  const results = Array.from({ length: 8 }, (_, i) => limiter.take(senderKey(`did:key:sender${i}`, 'agent-a'), 0));
  t.same(results, [0, 0, 0, 0, 0, 60, 60, 60], 'five messages in the window, whoever sends them');
  t.equal(limiter.take(senderKey('did:key:sender7', 'agent-b'), 0), 0, 'another agent has its own inbox rate');
  t.equal(limiter.take(senderKey('did:key:sender0', 'agent-a'), 0), 60, 'refused by the inbox rate');
});

t.test("a take the inbox rate refuses does not spend the sender's own allowance", async (t) => {
  const limiter = new RateLimiter({ limit: 1, windowMs: WINDOW, group: { of: inboxOfSenderKey, limit: 1 } });
  t.equal(limiter.take(senderKey('x', 'a'), 0), 0, 'x uses the inbox allowance');
  t.equal(
    limiter.take(senderKey('y', 'a'), 30_000),
    30,
    "y is refused by the inbox rate (y's own window starts at 30 s)",
  );
  t.equal(
    limiter.take(senderKey('y', 'a'), WINDOW),
    0,
    "a new inbox window: y's own window still runs and still has its 1",
  );
  t.equal(limiter.take(senderKey('y', 'a'), WINDOW + 1), 30, "now y's own limit (its window ends at 90 s)");
});

t.test('waits are whole seconds, at least 1', async (t) => {
  const limiter = new RateLimiter({ limit: 1, windowMs: 1_500 });
  t.equal(limiter.take('k', 0), 0);
  t.equal(limiter.take('k', 1), 2);
  t.equal(limiter.take('k', 1_499), 1);
  t.equal(limiter.take('k', 1_500), 0);
});
