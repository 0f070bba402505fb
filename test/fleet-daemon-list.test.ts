/**
 * The fleet's daemon list (`GET /fleet/daemons`) as put together from the members records, the drain marks and
 * the placements: who is alive, a down daemon kept while it is drained or holds placements, each daemon's
 * agents, and members records of this version, of an earlier one (the time alone) and odd ones. The route on
 * two built daemons is in test/console-fleet-daemons.test.ts.
 */
import t from 'tap';
import { daemonList } from '../extensions/fleet/daemon-list.js';
import { type MemberRecord, parseMember } from '../extensions/fleet/members.js';
import type { PlacementRecord } from '../extensions/fleet/placement.js';

t.test('members records: this version, an earlier one, and odd values', async (t) => {
  t.same(parseMember(JSON.stringify({ at: 1_700_000_000_000, replication: { enabled: true, lagMs: 250 } })), {
    at: 1_700_000_000_000,
    replication: { enabled: true, lagMs: 250 },
  });
  t.same(parseMember(JSON.stringify({ at: 5, replication: { enabled: false } })), {
    at: 5,
    replication: { enabled: false },
  });
  t.same(parseMember('1700000000000'), { at: 1_700_000_000_000, replication: null }, "an earlier daemon's record");
  t.same(parseMember('{"at":1e400,"replication":{"enabled":true,"lagMs":1e400}}'), {
    at: 0,
    replication: { enabled: true },
  });
  t.same(parseMember('{"at":"soon","replication":{"lagMs":3}}'), { at: 0, replication: null });
  t.same(parseMember('not json'), { at: 0, replication: null });
});

t.test('every daemon once, by name, with its agents, drain state and replication', async (t) => {
  const placement = (agentId: string, name: string, daemon: string): PlacementRecord =>
    ({ agentId, name, handle: null, daemon, since: 10 }) as PlacementRecord;
  const members = new Map<string, MemberRecord>([
    ['beta', { at: 100, replication: { enabled: true, lagMs: 1_500 } }],
    ['alpha', { at: 90, replication: { enabled: true, lagMs: 9_999 } }],
  ]);
  const list = daemonList('prod', {
    self: { name: 'alpha', replication: { enabled: true, lagMs: 0 } },
    members,
    marks: new Map([['gamma', { to: ['beta'], since: 50 }]]),
    placements: [placement('b', 'bob', 'alpha'), placement('a', 'ada', 'alpha'), placement('d', 'dee', 'delta')],
  });
  t.equal(list.fleet, 'prod');
  t.same(
    list.daemons.map((d) => [d.name, d.self, d.alive, d.heartbeatAt, d.draining, d.drainTo, d.drainedSince]),
    [
      ['alpha', true, true, 90, false, [], null],
      ['beta', false, true, 100, false, [], null],
      ['delta', false, false, null, false, [], null],
      ['gamma', false, false, null, true, ['beta'], 50],
    ],
    'alive ones, a down one still holding placements, a drained one that is down',
  );
  t.same(
    list.daemons.map((d) => d.agents.map((a) => a.name)),
    [['ada', 'bob'], [], ['dee'], []],
  );
  t.same(
    list.daemons.map((d) => d.replication),
    [{ enabled: true, lagMs: 0 }, { enabled: true, lagMs: 1_500 }, null, null],
    "the answering daemon's own lag is now, the others' from their heartbeat",
  );
  const alone = daemonList('prod', {
    self: { name: 'solo', replication: { enabled: false } },
    members: new Map(),
    marks: new Map(),
    placements: [],
  });
  t.same(
    alone.daemons.map((d) => [d.name, d.alive, d.heartbeatAt]),
    [['solo', true, null]],
    'the answering daemon before its first heartbeat',
  );
});
