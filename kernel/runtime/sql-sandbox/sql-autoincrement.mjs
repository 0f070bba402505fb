// Which cursors on `sqlite_sequence` in a compiled program are SQLite's own AUTOINCREMENT code (see
// sql-policy.mjs, "SQLite's own tables"). Plain JavaScript, imported by the policy in the SQL child.
//
// SQLite keeps an AUTOINCREMENT table's counter in `sqlite_sequence` (one row per table, the daemon's
// too) and emits fixed code to maintain it (insert.c: autoIncBegin, autoIncEnd): a prologue that loads
// the table's name into a register and reads only that name's counter, and an epilogue that writes a
// record made of that name register and the new counter. Those two shapes, with their cursors and
// registers tied together and the name a `local_*` table, are the only way agent SQL may touch
// `sqlite_sequence`; a SQLite whose code generation differs fails closed (AUTOINCREMENT is refused, and
// the boundary test's AUTOINCREMENT case says so).

/** The ops, in order, of SQLite's AUTOINCREMENT prologue after its OpenRead (insert.c, autoIncBegin). */
const AUTOINC_BEGIN = [
  'String8',
  'Null',
  'Rewind',
  'Column',
  'Ne',
  'Rowid',
  'Column',
  'AddImm',
  'Copy',
  'Goto',
  'Next',
  'Integer',
  'Close',
];
/** The ops, in order, of SQLite's AUTOINCREMENT epilogue after its OpenWrite (insert.c, autoIncEnd). */
const AUTOINC_END = ['NotNull', 'NewRowid', 'MakeRecord', 'Insert', 'Close'];

/**
 * The indexes of the OpenRead/OpenWrite ops on `sqlite_sequence` (root `seqRoot`) that are SQLite's own
 * AUTOINCREMENT code for a `local_*` table: the prologue loads the table's name into a register, finds
 * that name's row and reads only its counter; the epilogue writes a record made of that same name
 * register and the counter. Registers are the compiler's, so a name register loaded in a checked
 * prologue holds that local name. Whatever else opens `sqlite_sequence` is not in the returned set.
 * @param {Array<{opcode: string, p1: number, p2: number, p3: number, p4: unknown, p5: number}>} program
 * @param {number} seqRoot
 * @returns {Set<number>}
 */
export function autoincrementCursors(program, seqRoot) {
  const ours = new Set();
  const names = new Set();
  const shaped = (at, shape) => shape.every((opcode, k) => program[at + 1 + k]?.opcode === opcode);
  program.forEach((op, i) => {
    if (op.opcode !== 'OpenRead' || op.p2 !== seqRoot || op.p3 !== 0 || op.p5 !== 0 || !shaped(i, AUTOINC_BEGIN))
      return;
    const [name, init, rewind, column0, ne, rowid, column1, addImm, copy, , next, zero, close] = program.slice(
      i + 1,
      i + 1 + AUTOINC_BEGIN.length,
    );
    const cursor = op.p1;
    const nameReg = name.p2;
    const counter = nameReg + 1;
    const fits =
      typeof name.p4 === 'string' &&
      name.p4.startsWith('local_') &&
      init.p2 === counter &&
      [rewind, column0, rowid, column1, next, close].every((o) => o.p1 === cursor) &&
      column0.p2 === 0 &&
      column0.p3 === counter &&
      ne.p1 === nameReg &&
      ne.p3 === counter &&
      rowid.p2 === counter + 1 &&
      column1.p2 === 1 &&
      column1.p3 === counter &&
      addImm.p1 === counter &&
      copy.p1 === counter &&
      zero.p1 === 0 &&
      zero.p2 === counter;
    if (!fits) return;
    ours.add(i);
    names.add(nameReg);
  });
  program.forEach((op, i) => {
    if (op.opcode !== 'OpenWrite' || op.p2 !== seqRoot || op.p3 !== 0 || op.p5 !== 0 || !shaped(i, AUTOINC_END)) return;
    const [notNull, newRowid, record, insert, close] = program.slice(i + 1, i + 1 + AUTOINC_END.length);
    const cursor = op.p1;
    const nameReg = record.p1;
    const fits =
      names.has(nameReg) &&
      record.p2 === 2 &&
      notNull.p1 === nameReg + 2 &&
      newRowid.p1 === cursor &&
      newRowid.p2 === nameReg + 2 &&
      insert.p1 === cursor &&
      insert.p2 === record.p3 &&
      insert.p3 === nameReg + 2 &&
      close.p1 === cursor;
    if (fits) ours.add(i);
  });
  return ours;
}
