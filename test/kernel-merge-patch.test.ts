/** JSON Merge Patch (RFC 7396) as PATCH /agents/{id}/config applies it: the RFC's examples, and no mutation. */
import t from 'tap';
import { mergePatch } from '../kernel/json-merge-patch.js';

t.test('RFC 7396 appendix A', async (t) => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, result] of cases)
    t.same(mergePatch(target, patch), result, `${JSON.stringify(target)} + ${JSON.stringify(patch)}`);
});

t.test('the target is not modified', async (t) => {
  const target = { a: { b: 1, c: [1, 2] }, d: 'x' };
  const before = JSON.stringify(target);
  const merged = mergePatch(target, { a: { b: 2 }, d: null }) as Record<string, any>;
  t.equal(JSON.stringify(target), before);
  t.same(merged, { a: { b: 2, c: [1, 2] } });
  t.not(merged.a, target.a);
});
