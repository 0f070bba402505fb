// What agent SQL may do, checked on SQLite's own compiled program (see sql-runner.ts for the design).
// Plain JavaScript: the SQL child process (sql-child.mjs) imports it without a TypeScript loader.
//
// Three layers, in the order they run in the child:
// 1. The statement kind, from its first token (`statementKind`). Not a filter on words: SQLite decides a
//    statement's kind by its first keyword, and this gate exists because SQLite executes some PRAGMAs
//    (key, rekey, cipher settings, writable_schema, locking_mode, temp_store_directory, ...) while
//    *compiling* them, before any program could be checked. A PRAGMA can only be the first keyword of a
//    statement, so allowing only SELECT, WITH, VALUES (query) and INSERT, REPLACE, UPDATE, DELETE, WITH,
//    CREATE, DROP, ALTER (execute) keeps every compile-time side effect out. `hints` adds friendly early
//    messages (one statement per call, no TEMP/TRIGGER/VIEW/VIRTUAL) that are not the boundary.
// 2. The compiled program (`checkProgram`, on the rows of `EXPLAIN <sql>`, trigger and foreign-key
//    sub-programs included): every opcode from an allow-list, every called function from an allow-list of
//    SQLite's built-in scalar, aggregate, window, date, JSON and math functions, every b-tree it opens
//    in the main database and belonging to a `local_*` table or index, and the schema opcodes (the temp
//    schema, CreateBtree, Destroy, DropTable, ParseSchema, ...) only in CREATE/DROP/ALTER statements.
//    SQLite's own tables are reached only by SQLite's own code, told apart by where the
//    agent's SQL can put a query of its own (`schemaAccess`):
//    - the schema table (root page 1: sqlite_master / sqlite_schema, and the temp schema) is opened by
//      no SELECT, INSERT, UPDATE, DELETE, WITH or VALUES at all; CREATE (whose `AS SELECT` is the agent's
//      query) may only open it to write, which is SQLite adding the new object's row; DROP and ALTER,
//      whose grammar holds names and column definitions but no query, may read it (SQLite's own
//      DELETE/UPDATE of schema rows and its rename checks), and their effect is checked afterwards;
//    - `sqlite_sequence` (AUTOINCREMENT counters, one row per table, the daemon's included) is opened by
//      no CREATE; by DROP and ALTER as above (SQLite deleting or renaming the dropped or renamed local
//      table's row); and by the other statements only in the exact code SQLite emits for AUTOINCREMENT
//      (`autoincrementCursors`): read the counter of the one `local_*` table the statement inserts into,
//      write it back under that same name. Any other cursor on it (a SELECT, a subquery, a CTE, an
//      INSERT ... SELECT, an UPDATE or DELETE of it) is refused.
// 3. For CREATE/DROP/ALTER, the effect (`checkSchemaEffect`): after the statement ran, in the same
//    transaction, `sqlite_master` may differ from before only by `local_*` tables and indexes (no
//    triggers, views or virtual tables, nothing renamed out of or into `local_*`), and the temp schema
//    is empty. Otherwise the transaction is rolled back.

import { autoincrementCursors } from './sql-autoincrement.mjs';

/** Statement kinds by first keyword. */
export const QUERY_KINDS = new Set(['SELECT', 'WITH', 'VALUES']);
export const EXECUTE_KINDS = new Set(['INSERT', 'REPLACE', 'UPDATE', 'DELETE', 'WITH', 'CREATE', 'DROP', 'ALTER']);
export const DDL_KINDS = new Set(['CREATE', 'DROP', 'ALTER']);

/**
 * SQLite's built-in functions agent SQL may call (lower case). Anything else — readfile, writefile,
 * load_extension, edit, fts3_tokenizer, sha3_query, the sqlite3mc_* cipher functions, sqlite_attach and
 * sqlite_detach (what ATTACH and DETACH compile to), extension functions — is refused.
 */
export const ALLOWED_FUNCTIONS = new Set([
  // core scalar
  'abs',
  'changes',
  'char',
  'coalesce',
  'concat',
  'concat_ws',
  'format',
  'glob',
  'hex',
  'ifnull',
  'iif',
  'instr',
  'last_insert_rowid',
  'length',
  'like',
  'likelihood',
  'likely',
  'lower',
  'ltrim',
  'max',
  'min',
  'nullif',
  'octet_length',
  'printf',
  'quote',
  'random',
  'randomblob',
  'replace',
  'round',
  'rtrim',
  'sign',
  'soundex',
  'substr',
  'substring',
  'total_changes',
  'trim',
  'typeof',
  'unhex',
  'unicode',
  'unlikely',
  'upper',
  'zeroblob',
  // date and time
  'date',
  'time',
  'datetime',
  'julianday',
  'unixepoch',
  'strftime',
  'timediff',
  'current_date',
  'current_time',
  'current_timestamp',
  // aggregate
  'avg',
  'count',
  'group_concat',
  'string_agg',
  'sum',
  'total',
  // window
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  // JSON
  '->',
  '->>',
  'json',
  'json_array',
  'json_array_length',
  'json_error_position',
  'json_extract',
  'json_insert',
  'json_object',
  'json_patch',
  'json_quote',
  'json_remove',
  'json_replace',
  'json_set',
  'json_type',
  'json_valid',
  'json_group_array',
  'json_group_object',
  'jsonb',
  'jsonb_array',
  'jsonb_extract',
  'jsonb_insert',
  'jsonb_object',
  'jsonb_patch',
  'jsonb_remove',
  'jsonb_replace',
  'jsonb_set',
  'jsonb_group_array',
  'jsonb_group_object',
  // math (SQLite's math function names; the ones a build lacks fail to compile anyway)
  'acos',
  'acosh',
  'asin',
  'asinh',
  'atan',
  'atan2',
  'atanh',
  'ceil',
  'ceiling',
  'cos',
  'cosh',
  'degrees',
  'exp',
  'floor',
  'ln',
  'log',
  'log10',
  'log2',
  'mod',
  'pi',
  'pow',
  'power',
  'radians',
  'sin',
  'sinh',
  'sqrt',
  'tan',
  'tanh',
  'trunc',
]);

/** SQLite's internal functions that ALTER TABLE compiles to (user SQL cannot call them at all). */
export const DDL_FUNCTIONS = new Set([
  'sqlite_rename_table',
  'sqlite_rename_test',
  'sqlite_rename_column',
  'sqlite_rename_quotefix',
  'sqlite_drop_column',
]);

/**
 * Opcodes with nothing to check: control flow, registers, comparisons, cursors on already-checked b-trees, sorters,
 * ephemeral tables.
 */
const PLAIN_OPCODES = new Set([
  'Init',
  'Goto',
  'Gosub',
  'Return',
  'InitCoroutine',
  'Yield',
  'EndCoroutine',
  'BeginSubrtn',
  'Halt',
  'HaltIfNull',
  'Integer',
  'Int64',
  'Real',
  'String8',
  'String',
  'Null',
  'SoftNull',
  'Blob',
  'Variable',
  'Move',
  'Copy',
  'SCopy',
  'IntCopy',
  'ResultRow',
  'Concat',
  'Add',
  'Subtract',
  'Multiply',
  'Divide',
  'Remainder',
  'CollSeq',
  'BitAnd',
  'BitOr',
  'ShiftLeft',
  'ShiftRight',
  'AddImm',
  'MustBeInt',
  'RealAffinity',
  'Cast',
  'Eq',
  'Ne',
  'Lt',
  'Le',
  'Gt',
  'Ge',
  'ElseEq',
  'Permutation',
  'Compare',
  'Jump',
  'And',
  'Or',
  'IsTrue',
  'Not',
  'BitNot',
  'Once',
  'If',
  'IfNot',
  'IsNull',
  'IsType',
  'ZeroOrNull',
  'NotNull',
  'IfNullRow',
  'Offset',
  'Column',
  'TypeCheck',
  'Affinity',
  'MakeRecord',
  'Count',
  'ReadCookie',
  'OpenDup',
  'OpenAutoindex',
  'OpenEphemeral',
  'SorterOpen',
  'SequenceTest',
  'OpenPseudo',
  'Close',
  'SeekLT',
  'SeekLE',
  'SeekGE',
  'SeekGT',
  'SeekScan',
  'SeekHit',
  'IfNotOpen',
  'IfNoHope',
  'NoConflict',
  'NotFound',
  'Found',
  'SeekRowid',
  'NotExists',
  'Sequence',
  'NewRowid',
  'Insert',
  'RowCell',
  'Delete',
  'ResetCount',
  'SorterCompare',
  'SorterData',
  'RowData',
  'Rowid',
  'NullRow',
  'SeekEnd',
  'Last',
  'IfSmaller',
  'SorterSort',
  'Sort',
  'Rewind',
  'SorterNext',
  'Prev',
  'Next',
  'SorterInsert',
  'IdxInsert',
  'IdxDelete',
  'DeferredSeek',
  'IdxRowid',
  'FinishSeek',
  'IdxLE',
  'IdxGT',
  'IdxLT',
  'IdxGE',
  'ResetSorter',
  'RowSetAdd',
  'RowSetRead',
  'RowSetTest',
  'Program',
  'Param',
  'FkCheck',
  'FkCounter',
  'FkIfZero',
  'MemMax',
  'IfPos',
  'OffsetLimit',
  'IfNotZero',
  'DecrJumpZero',
  'ClrSubtype',
  'GetSubtype',
  'SetSubtype',
  'FilterAdd',
  'Filter',
  'CursorHint',
  'Noop',
  'Explain',
  'Abortable',
  'ReleaseReg',
  'Trace',
]);
const FUNCTION_OPCODES = new Set(['Function', 'PureFunc', 'AggStep', 'AggStep1', 'AggValue', 'AggInverse', 'AggFinal']);
const OPEN_OPCODES = new Set(['OpenRead', 'OpenWrite', 'ReopenIdx']);
/** Why some refused opcodes are refused, for the message. */
const REFUSED_WHY = {
  VOpen:
    'virtual tables and table-valued functions (json_each, fsdir, pragma_*, generate_series, ...) are not available',
  VCreate: 'virtual tables are not available',
  VDestroy: 'virtual tables are not available',
  VBegin: 'virtual tables are not available',
  Vacuum: 'VACUUM is not available',
  IncrVacuum: 'VACUUM is not available',
  Checkpoint: 'checkpoints are not available',
  JournalMode: 'the journal mode cannot change',
  LoadAnalysis: 'ANALYZE is not available',
  DropTrigger: 'triggers are not available',
  IntegrityCk: 'integrity checks are not available',
  Pagecount: 'PRAGMA is not available',
  MaxPgcnt: 'PRAGMA is not available',
  TableLock: 'table locks are not available',
  AutoCommit: "transaction control is the daemon's",
  Savepoint: "transaction control is the daemon's",
};
/** OpenRead/OpenWrite p5 flag: p2 is a register holding the root page (set by CreateBtree in the same program). */
const OPFLAG_P2ISREG = 0x10;
/**
 * SetCookie targets DDL may set: schema version, file format, text encoding (never user_version, application_id, ...).
 */
const DDL_COOKIES = new Set([1, 2, 5]);
/**
 * What SQLite itself runs through OP_SqlExec after CREATE TABLE: an integrity check of the new table (or of
 * the `sqlite_sequence` table AUTOINCREMENT creates), or a read of a table with generated columns. The
 * name inside is SQLite's quoted literal of the table name.
 */
const SQL_EXEC_FORMS = [
  /^PRAGMA "main"\.integrity_check\('(?:local_(?:[^']|'')*|sqlite_sequence)'\)$/,
  /^SELECT\*FROM"main"\."local_(?:[^"]|"")*"$/,
];

export class SqlRefusal extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const forbidden = (message) => new SqlRefusal('forbidden', message);
const bad = (message) => new SqlRefusal('bad_request', message);

/** SQLite's white space (tokenize.c: space, tab, newline, form feed, carriage return). */
const isSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
/** SQLite's identifier characters: letters, digits, `_`, `$` and every byte above 0x7f. */
const isIdChar = (c) => /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) > 0x7f;

/** Index after white space and comments starting at `i`. */
function skipBlank(sql, i) {
  for (;;) {
    if (i < sql.length && isSpace(sql[i])) i++;
    else if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else return i;
  }
}

/** The words of the statement outside literals and comments, in order, and whether anything follows its first `;`. */
function scan(sql) {
  const words = [];
  let i = 0;
  let tail = false;
  while (i < sql.length) {
    i = skipBlank(sql, i);
    if (i >= sql.length) break;
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      // A literal or quoted identifier; a doubled quote continues it.
      let j = i + 1;
      for (;;) {
        const end = sql.indexOf(c, j);
        if (end < 0) return { words, tail, unterminated: true };
        if (sql[end + 1] === c) j = end + 2;
        else {
          i = end + 1;
          break;
        }
      }
    } else if (c === '[') {
      const end = sql.indexOf(']', i + 1);
      if (end < 0) return { words, tail, unterminated: true };
      i = end + 1;
    } else if (c === ';') {
      tail = skipRest(sql, i + 1);
      break;
    } else if (isIdChar(c)) {
      let j = i + 1;
      while (j < sql.length && isIdChar(sql[j])) j++;
      words.push(sql.slice(i, j).toUpperCase());
      i = j;
    } else i++;
  }
  return { words, tail, unterminated: false };
}

/** True when something other than blanks and empty statements follows position `i`. */
function skipRest(sql, i) {
  for (;;) {
    i = skipBlank(sql, i);
    if (i >= sql.length) return false;
    if (sql[i] !== ';') return true;
    i++;
  }
}

/**
 * The statement's kind (its first keyword) after checking it suits `mode`; `hints` adds the friendly
 * early refusals. Throws a {@link SqlRefusal}.
 * @param {string} sql @param {'query'|'execute'} mode @param {boolean} hints
 */
export function statementKind(sql, mode, hints = true) {
  const start = skipBlank(sql, 0);
  let end = start;
  while (end < sql.length && isIdChar(sql[end])) end++;
  const kind = sql.slice(start, end).toUpperCase();
  if (kind === '') throw bad('expected one SQL statement');
  const allowed = mode === 'query' ? QUERY_KINDS : EXECUTE_KINDS;
  if (!allowed.has(kind)) {
    const other = mode === 'query' ? EXECUTE_KINDS : QUERY_KINDS;
    if (other.has(kind)) {
      throw bad(
        mode === 'query'
          ? `db_query only reads; use db_execute for ${kind}`
          : `db_execute changes data; use db_query for ${kind}`,
      );
    }
    throw forbidden(
      `${kind} statements are not available to agent SQL (${mode === 'query' ? 'db_query takes SELECT, WITH or VALUES' : 'db_execute takes INSERT, REPLACE, UPDATE, DELETE, WITH, CREATE, DROP or ALTER'}); PRAGMA, ATTACH, DETACH, VACUUM, ANALYZE and transaction control never are`,
    );
  }
  if (hints) {
    const { words, tail, unterminated } = scan(sql);
    if (kind === 'CREATE') {
      const second = words[1] === 'UNIQUE' ? words[2] : words[1];
      if (second === 'TEMP' || second === 'TEMPORARY')
        throw forbidden('TEMP objects are not available to agent SQL: create local_* tables');
      if (second === 'TRIGGER' || second === 'VIEW' || second === 'VIRTUAL')
        throw forbidden(`CREATE ${second} is not available to agent SQL: only local_* tables and indexes`);
    }
    if (unterminated) throw bad('SQL error: unterminated string or quoted name');
    if (tail) throw bad('one SQL statement at a time');
  }
  return kind;
}

/** `name(argc)` in a function opcode's p4 → lower-case name. */
function functionName(p4) {
  const text = String(p4 ?? '');
  const open = text.lastIndexOf('(');
  return (open > 0 ? text.slice(0, open) : text).toLowerCase();
}

/** True for the names of the agent's own objects. */
export const isLocalName = (name) => typeof name === 'string' && name.startsWith('local_');

/**
 * How a statement of this kind may reach SQLite's own tables (see the header): `none` for every statement
 * that is not a schema change (the agent's query can be anywhere in it), `write` for CREATE (its
 * `AS SELECT` is the agent's query; SQLite itself only writes the schema table), `read` for DROP and
 * ALTER (no query of the agent's fits their grammar: what reads SQLite's tables there is SQLite).
 * @param {string} kind the statement's first keyword
 * @returns {'none' | 'write' | 'read'}
 */
export function schemaAccess(kind) {
  if (kind === 'DROP' || kind === 'ALTER') return 'read';
  if (kind === 'CREATE') return 'write';
  return 'none';
}

/**
 * Checks a compiled program against the allow-lists. `objects` maps root page → {type, name, tbl_name}
 * from `sqlite_master`, read in the same transaction; `kind` is the statement's first keyword. Throws a
 * {@link SqlRefusal}.
 * @param {Array<{opcode: string, p1: number, p2: number, p3: number, p4: unknown, p5: number}>} program
 * @param {{kind: string, objects: Map<number, {type: string, name: string, tbl_name: string}>}} context
 */
export function checkProgram(program, { kind, objects }) {
  const ddl = DDL_KINDS.has(kind);
  const access = schemaAccess(kind);
  let seqRoot;
  for (const [root, object] of objects)
    if (object.type === 'table' && object.name === 'sqlite_sequence') seqRoot = root;
  const autoincrement = seqRoot === undefined || access !== 'none' ? new Set() : autoincrementCursors(program, seqRoot);
  const createdRegisters = new Set();
  for (const op of program) if (op.opcode === 'CreateBtree') createdRegisters.add(op.p2);
  const ddlOnly = (op) => {
    if (!ddl)
      throw forbidden(`the statement uses ${op.opcode}, which only CREATE, DROP and ALTER on local_* objects may`);
  };
  /** `at`: the op's index; `writes`: the op opens for writing (OpenWrite) or clears. */
  const reach = (root, db, opcode, at, writes) => {
    if (db !== 0) {
      if (access === 'read' && db === 1 && root === 1) return; // ALTER TABLE edits the (empty) temp schema too; the effect check keeps it empty
      throw forbidden(
        db === 1
          ? 'TEMP objects are not available to agent SQL'
          : "only the agent file's main database is reachable (no ATTACH)",
      );
    }
    if (root === 1) {
      // The schema table itself; what DDL changed is checked after it ran.
      if (access === 'read' || (access === 'write' && writes && opcode === 'OpenWrite')) return;
      throw forbidden('sqlite_master (sqlite_schema) is not reachable from agent SQL');
    }
    const object = objects.get(root);
    if (root === seqRoot) {
      if (access === 'read' || autoincrement.has(at)) return;
      throw forbidden(
        'sqlite_sequence is not reachable from agent SQL (SQLite keeps AUTOINCREMENT counters there itself)',
      );
    }
    if (object && isLocalName(object.tbl_name)) return;
    throw forbidden(
      `the statement reaches ${object ? `${object.type} ${object.name}` : `b-tree ${root}`} (${opcode}), outside the agent's local_* tables`,
    );
  };
  program.forEach((op, at) => {
    const { opcode } = op;
    if (PLAIN_OPCODES.has(opcode)) return;
    if (FUNCTION_OPCODES.has(opcode)) {
      const name = functionName(op.p4);
      if (ALLOWED_FUNCTIONS.has(name) || (ddl && DDL_FUNCTIONS.has(name))) return;
      if (name === 'sqlite_attach' || name === 'sqlite_detach')
        throw forbidden('ATTACH and DETACH are not available to agent SQL');
      throw forbidden(`the function ${name}() is not available to agent SQL`);
    }
    if (OPEN_OPCODES.has(opcode)) {
      if (opcode !== 'ReopenIdx' && (op.p5 & OPFLAG_P2ISREG) !== 0) {
        // The root page is in a register: only a b-tree this DDL program created itself.
        ddlOnly(op);
        if (!createdRegisters.has(op.p2) || op.p3 !== 0) throw forbidden(`${opcode} of a computed root page`);
        return;
      }
      reach(op.p2, op.p3, opcode, at, opcode === 'OpenWrite');
      return;
    }
    switch (opcode) {
      case 'Transaction':
        if (op.p1 === 0 || (ddl && op.p1 === 1)) return;
        throw forbidden(
          op.p1 === 1
            ? 'TEMP objects are not available to agent SQL'
            : "only the agent file's main database is reachable (no ATTACH)",
        );
      case 'Clear': // DELETE without WHERE: p1 root, p2 database
        reach(op.p1, op.p2, opcode, at, true);
        return;
      case 'Destroy': // DROP TABLE / DROP INDEX: p1 root, p3 database
        ddlOnly(op);
        reach(op.p1, op.p3, opcode, at, true);
        return;
      case 'CreateBtree':
        ddlOnly(op);
        if (op.p1 !== 0) throw forbidden('TEMP objects are not available to agent SQL');
        return;
      case 'DropTable':
      case 'DropIndex':
        ddlOnly(op);
        if (op.p1 !== 0 || !(isLocalName(op.p4) || String(op.p4).startsWith('sqlite_autoindex_local_')))
          throw forbidden(`only local_* tables and indexes can be dropped, not ${op.p4}`);
        return;
      case 'ParseSchema':
        ddlOnly(op);
        if (op.p1 !== 0 && op.p1 !== 1) throw forbidden("only the agent file's main database is reachable (no ATTACH)");
        return;
      case 'SetCookie':
        ddlOnly(op);
        if (op.p1 !== 0 || !DDL_COOKIES.has(op.p2))
          throw forbidden('the statement sets a database header field agent SQL may not set');
        return;
      case 'Expire':
        ddlOnly(op);
        return;
      case 'SqlExec':
        ddlOnly(op);
        if (!SQL_EXEC_FORMS.some((form) => form.test(String(op.p4 ?? ''))))
          throw forbidden('the statement runs nested SQL agent SQL may not run');
        return;
      case 'JournalMode': // DROP ... IF EXISTS marks itself as a writer with a journal-mode *query* (p3 = -1)
        ddlOnly(op);
        if (op.p3 !== -1) throw forbidden('the journal mode cannot change');
        return;
      default:
        throw forbidden(
          REFUSED_WHY[opcode]
            ? `${REFUSED_WHY[opcode]} to agent SQL`
            : `the statement uses ${opcode}, which agent SQL may not use`,
        );
    }
  });
}

/** True for a schema row agent DDL may have created, changed or removed. */
function agentOwned(row) {
  if (row.type === 'table')
    return isLocalName(row.name) && isLocalName(row.tbl_name) && /^CREATE\s+TABLE\b/i.test(row.sql ?? '');
  if (row.type === 'index') {
    const named = isLocalName(row.name) || row.name.startsWith('sqlite_autoindex_local_');
    return named && isLocalName(row.tbl_name) && (row.sql === null || /^CREATE\s+(UNIQUE\s+)?INDEX\b/i.test(row.sql));
  }
  return false;
}

const rowKey = (row) => `${row.type}\u0000${row.name}`;
const sameRow = (a, b) => a.type === b.type && a.name === b.name && a.tbl_name === b.tbl_name && a.sql === b.sql;

/**
 * What a DDL statement did to `sqlite_master` (rows `{type, name, tbl_name, sql}`, root pages left out:
 * DROP may move other tables' root pages in an auto-vacuum file) must touch only `local_*` tables and
 * indexes; `sqlite_sequence` may appear (AUTOINCREMENT). Throws a `forbidden` {@link SqlRefusal}.
 * @param {Array<{type: string, name: string, tbl_name: string, sql: string|null}>} before
 * @param {Array<{type: string, name: string, tbl_name: string, sql: string|null}>} after
 * @param {number} tempObjects rows of the temp schema afterwards
 */
export function checkSchemaEffect(before, after, tempObjects) {
  if (tempObjects !== 0) throw forbidden('TEMP objects are not available to agent SQL');
  const old = new Map(before.map((row) => [rowKey(row), row]));
  const now = new Map(after.map((row) => [rowKey(row), row]));
  for (const row of after) {
    const previous = old.get(rowKey(row));
    if (previous && sameRow(previous, row)) continue;
    if (!previous && row.type === 'table' && row.name === 'sqlite_sequence') continue;
    if (!agentOwned(row) || (previous && !agentOwned(previous))) {
      throw forbidden(
        `schema changes are limited to local_* tables and indexes: the statement would ${previous ? 'change' : 'create'} ${row.type} ${row.name}${row.tbl_name !== row.name ? ` on ${row.tbl_name}` : ''}`,
      );
    }
  }
  for (const row of before) {
    if (now.has(rowKey(row))) continue;
    if (!agentOwned(row))
      throw forbidden(
        `schema changes are limited to local_* tables and indexes: the statement would remove ${row.type} ${row.name}`,
      );
  }
}
