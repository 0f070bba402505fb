// The QuickJS host thread for system-scope lambdas (see lambda-runner.ts for the main-thread side).
//
// Why a worker at all when QuickJS is already the sandbox: the interpreter runs synchronously, so a
// lambda that spins until its time limit would otherwise freeze the daemon's event loop (and every
// other agent) for that long. The worker keeps the daemon responsive; QuickJS is the boundary.
// Plain JavaScript on purpose: worker threads do not inherit the tsx loader registered in the main
// thread, and this file only needs an npm package.
//
// Memory: every sandbox (one cold call, or one warm context) gets its own instance of the QuickJS
// WebAssembly module with its own WebAssembly.Memory whose `maximum` is the memory limit, so the
// interpreter's whole heap (its own structures, the stack and everything the lambda allocates) can
// never grow past it: an allocation beyond fails inside QuickJS ("out of memory") at once. QuickJS's
// own `setMemoryLimit` is set too, but this build cannot measure block sizes (it counts every block as
// a few bytes), so on its own it only stops single oversized allocations. A sandbox that failed is
// dropped whole, never reused or disposed piecemeal (QuickJS may abort when a runtime torn by an
// out-of-memory error is freed).
//
// Calls run one at a time, in arrival order. Protocol (parentPort messages):
//   {op: 'run', id, key, warm, code, codeId, file, fn, eventJson, timeoutMs, memoryBytes, maxResultBytes}
//     -> {id, started: true}   right before the lambda's code runs (its time limit starts now)
//     -> {id, ok: true, resultJson, logs} | {id, ok: false, code, message, logs}
//   {op: 'dispose', key}   drops a warm context
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  shouldInterruptAfterDeadline,
} from 'quickjs-emscripten';

const MAX_LOG_LINES = 50;
const MAX_LOG_CHARS = 1000;
/** Warm contexts kept per worker (each holds its own module and memory); the least recently used go first. */
const MAX_WARM = 16;
const WASM_PAGE = 64 * 1024;
/** The module's built-in initial memory (Emscripten INITIAL_MEMORY, 16 MB). */
const INITIAL_PAGES = 256;

/** The compiled WebAssembly module, shared by every sandbox's instance (compiling it once saves ~100 ms each). */
async function compileModule() {
  try {
    const fromQuickjs = createRequire(createRequire(import.meta.url).resolve('quickjs-emscripten'));
    return await WebAssembly.compile(readFileSync(fromQuickjs.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
  } catch {
    return undefined; // each instance then loads and compiles the file itself
  }
}
/** Warm contexts: key -> sandbox (in use order: the first is the least recently used). */
const warm = new Map();
let wasmModule;

function coded(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

/** A fresh QuickJS instance whose memory cannot grow past `memoryBytes`. */
async function newSandbox(memoryBytes) {
  const maximum = Math.max(INITIAL_PAGES, Math.ceil(memoryBytes / WASM_PAGE));
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmMemory: memory, ...(wasmModule ? { wasmModule } : {}) }),
  );
  return {
    module,
    runtime: undefined,
    context: undefined,
    fn: undefined,
    call: undefined,
    codeId: undefined,
    logs: [],
  };
}

/** Frees a healthy sandbox; a failed one is only dropped (its memory goes with the module). */
function disposeSandbox(sandbox) {
  try {
    sandbox.fn?.dispose();
    sandbox.call?.dispose();
    sandbox.context?.dispose();
    sandbox.runtime?.dispose();
  } catch {
    // Dropped anyway.
  }
}

/**
 * Turns a VM call result into a handle or a coded error (interrupts become `timeout`, allocation failures
 * `out_of_memory`).
 */
function unwrap(context, result, code, memoryBytes) {
  if (!result.error) return result.value;
  const dumped = context.dump(result.error);
  result.error.dispose();
  const text =
    typeof dumped === 'object' && dumped !== null
      ? `${dumped.name ?? 'Error'}: ${dumped.message ?? ''}`
      : String(dumped);
  if (/interrupted/i.test(text)) throw coded('timeout', 'lambda exceeded its time limit and was stopped');
  if (/out of memory/i.test(text)) throw outOfMemory(memoryBytes);
  throw coded(code, text);
}

const outOfMemory = (memoryBytes) =>
  coded('out_of_memory', `lambda exceeded its memory limit of ${Math.round(memoryBytes / (1024 * 1024))} MB`);

/** Evaluates the lambda's module in a new runtime of `sandbox` (this is lambda code: it runs under the deadline). */
function load(sandbox, message) {
  const runtime = sandbox.module.newRuntime();
  sandbox.runtime = runtime;
  runtime.setMemoryLimit(message.memoryBytes);
  runtime.setMaxStackSize(512 * 1024);
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + message.timeoutMs));
  const context = runtime.newContext();
  sandbox.context = context;
  sandbox.codeId = message.codeId;
  // console.* is the only channel out besides the return value; lines are capped.
  const consoleHandle = context.newObject();
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const fnHandle = context.newFunction(level, (...args) => {
      if (sandbox.logs.length < MAX_LOG_LINES) {
        const line = args
          .map((a) => {
            const v = context.dump(a);
            return typeof v === 'string' ? v : JSON.stringify(v);
          })
          .join(' ');
        sandbox.logs.push(`${level}: ${line}`.slice(0, MAX_LOG_CHARS));
      }
    });
    context.setProp(consoleHandle, level, fnHandle);
    fnHandle.dispose();
  }
  context.setProp(context.global, 'console', consoleHandle);
  consoleHandle.dispose();

  const wrapped = `(function(){var module={exports:{}};var exports=module.exports;\n${message.code}\n;return module.exports;})()`;
  const exportsHandle = unwrap(context, context.evalCode(wrapped, message.file), 'load_failed', message.memoryBytes);
  const fn = context.getProp(exportsHandle, message.fn);
  exportsHandle.dispose();
  if (context.typeof(fn) !== 'function') {
    fn.dispose();
    throw coded('bad_request', `${message.file} does not export a function named ${message.fn}`);
  }
  sandbox.fn = fn;
  sandbox.call = unwrap(
    context,
    context.evalCode('(function(f, json){ return f(JSON.parse(json)); })', 'agt-call.js'),
    'internal_error',
    message.memoryBytes,
  );
}

/** Calls the loaded function with the event; returns the result as JSON text. */
function invoke(sandbox, message) {
  const { context, runtime } = sandbox;
  const memoryBytes = message.memoryBytes;
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + message.timeoutMs));
  const arg = context.newString(message.eventJson);
  let value;
  try {
    value = unwrap(
      context,
      context.callFunction(sandbox.call, context.undefined, sandbox.fn, arg),
      'lambda_failed',
      memoryBytes,
    );
  } finally {
    arg.dispose();
  }
  // Async lambdas: drain the job queue; with no timers in the sandbox, a still-pending promise never settles.
  if (context.typeof(value) === 'object') {
    const state = context.getPromiseState(value);
    if (!state.notAPromise) {
      if (state.type === 'fulfilled') state.value.dispose();
      else if (state.type === 'rejected') state.error.dispose();
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        value.dispose();
        unwrap(context, { error: jobs.error }, 'lambda_failed', memoryBytes);
      }
      const settled = context.getPromiseState(value);
      if (settled.type === 'pending') {
        value.dispose();
        throw coded('lambda_failed', 'lambda returned a promise that never settles (the sandbox has no timers or I/O)');
      }
      if (!settled.notAPromise) {
        value.dispose();
        value = unwrap(
          context,
          settled.type === 'fulfilled' ? { value: settled.value } : { error: settled.error },
          'lambda_failed',
          memoryBytes,
        );
      }
    }
  }
  const json = context.getProp(context.global, 'JSON');
  const stringify = context.getProp(json, 'stringify');
  json.dispose();
  const out = unwrap(context, context.callFunction(stringify, context.undefined, value), 'lambda_failed', memoryBytes);
  stringify.dispose();
  value.dispose();
  const text = context.typeof(out) === 'string' ? context.getString(out) : 'null';
  out.dispose();
  if (text.length > message.maxResultBytes)
    throw coded('payload_too_large', `lambda result exceeds ${message.maxResultBytes} bytes`);
  return text;
}

async function run(message) {
  let sandbox = message.warm ? warm.get(message.key) : undefined;
  if (sandbox) warm.delete(message.key); // re-inserted at the end when kept: most recently used last
  if (sandbox && sandbox.codeId !== message.codeId) {
    // The file changed since the context was warmed: start over with the new code.
    disposeSandbox(sandbox);
    sandbox = undefined;
  }
  const fresh = !sandbox;
  sandbox ??= await newSandbox(message.memoryBytes);
  sandbox.logs = [];
  parentPort.postMessage({ id: message.id, started: true });
  let failed = false;
  try {
    if (fresh) load(sandbox, message);
    return { resultJson: invoke(sandbox, message), logs: sandbox.logs };
  } catch (error) {
    // After an interrupt or an allocation failure the sandbox's state is unknown: never reuse it.
    failed = true;
    const coded_ =
      error && typeof error.code === 'string'
        ? error
        : /memory|OOM/i.test(String(error?.message))
          ? outOfMemory(message.memoryBytes)
          : coded('internal_error', `lambda sandbox failed: ${String(error?.message ?? error)}`);
    coded_.logs = sandbox.logs;
    throw coded_;
  } finally {
    if (message.warm && !failed) {
      warm.set(message.key, sandbox);
      while (warm.size > MAX_WARM) {
        const [oldest, entry] = warm.entries().next().value;
        warm.delete(oldest);
        disposeSandbox(entry);
      }
    } else if (!failed) disposeSandbox(sandbox);
  }
}

async function handle(message) {
  if (message.op === 'dispose') {
    const sandbox = warm.get(message.key);
    if (sandbox) disposeSandbox(sandbox);
    warm.delete(message.key);
    return;
  }
  try {
    const { resultJson, logs } = await run(message);
    parentPort.postMessage({ id: message.id, ok: true, resultJson, logs });
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      ok: false,
      code: error.code ?? 'lambda_failed',
      message: String(error.message ?? error),
      logs: error.logs ?? [],
    });
  }
}

// Calls queue behind one another, after the module is compiled; the listener is attached at once so
// no message sent meanwhile is missed.
let chain = compileModule().then((compiled) => {
  wasmModule = compiled;
  parentPort.postMessage({ ready: true });
});
parentPort.on('message', (message) => {
  chain = chain.then(() => handle(message)).catch(() => {});
});
