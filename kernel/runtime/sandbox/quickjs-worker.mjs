// The QuickJS host thread for system-scope lambdas (see lambda-runner.ts for the main-thread side).
//
// Why a worker at all when QuickJS is already the sandbox: the interpreter runs synchronously, so a
// lambda that spins until its time limit would otherwise freeze the daemon's event loop (and every
// other agent) for that long. The worker keeps the daemon responsive; QuickJS is the boundary.
// Plain JavaScript on purpose: worker threads do not inherit the tsx loader registered in the main
// thread, and this file only needs an npm package.
//
// Protocol (parentPort messages):
//   {op: 'run', id, key, warm, code, fn, eventJson, timeoutMs, memoryBytes, maxResultBytes}
//     -> {id, ok: true, resultJson, logs} | {id, ok: false, code, message, logs}
//   {op: 'dispose', key}   drops a warm context
import { parentPort } from 'node:worker_threads';
import { getQuickJS, shouldInterruptAfterDeadline } from 'quickjs-emscripten';

const MAX_LOG_LINES = 50;
const MAX_LOG_CHARS = 1000;

const quickjs = await getQuickJS();
/** Warm contexts: key -> {runtime, context, fn, codeId, logs}. */
const warm = new Map();

function disposeEntry(entry) {
  try {
    entry.fn.dispose();
    entry.call.dispose();
    entry.context.dispose();
    entry.runtime.dispose();
  } catch {
    // A context torn after an interrupt may refuse a clean dispose; the thread keeps going.
  }
}

/** Builds a runtime + context with the lambda's module evaluated; throws a coded error. */
function prepare(message) {
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(message.memoryBytes);
  runtime.setMaxStackSize(512 * 1024);
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + message.timeoutMs));
  const context = runtime.newContext();
  const entry = { runtime, context, fn: undefined, call: undefined, codeId: message.codeId, logs: [] };
  try {
    // console.* is the only channel out besides the return value; lines are capped.
    const consoleHandle = context.newObject();
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const fnHandle = context.newFunction(level, (...args) => {
        if (entry.logs.length < MAX_LOG_LINES) {
          const line = args
            .map((a) => {
              const v = context.dump(a);
              return typeof v === 'string' ? v : JSON.stringify(v);
            })
            .join(' ');
          entry.logs.push(`${level}: ${line}`.slice(0, MAX_LOG_CHARS));
        }
      });
      context.setProp(consoleHandle, level, fnHandle);
      fnHandle.dispose();
    }
    context.setProp(context.global, 'console', consoleHandle);
    consoleHandle.dispose();

    const wrapped = `(function(){var module={exports:{}};var exports=module.exports;\n${message.code}\n;return module.exports;})()`;
    const exportsHandle = unwrap(context, context.evalCode(wrapped, message.file), 'load_failed');
    const fn = context.getProp(exportsHandle, message.fn);
    exportsHandle.dispose();
    if (context.typeof(fn) !== 'function') {
      fn.dispose();
      throw coded('bad_request', `${message.file} does not export a function named ${message.fn}`);
    }
    entry.fn = fn;
    entry.call = unwrap(
      context,
      context.evalCode(
        '(function(f, json){ return f(JSON.parse(json)); })',
        'agt-call.js',
      ),
      'internal_error',
    );
    return entry;
  } catch (error) {
    disposeEntry({ ...entry, fn: entry.fn ?? { dispose() {} }, call: entry.call ?? { dispose() {} } });
    throw error;
  }
}

function coded(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

/** Turns a VM call result into a handle or a coded error (interrupts become `timeout`). */
function unwrap(context, result, code) {
  if (!result.error) return result.value;
  const dumped = context.dump(result.error);
  result.error.dispose();
  const text = typeof dumped === 'object' && dumped !== null ? `${dumped.name ?? 'Error'}: ${dumped.message ?? ''}` : String(dumped);
  if (/interrupted/i.test(text)) throw coded('timeout', 'lambda exceeded its time limit and was stopped');
  if (/out of memory/i.test(text)) throw coded('payload_too_large', 'lambda exceeded its memory limit');
  throw coded(code, text);
}

function run(message) {
  let entry = message.warm ? warm.get(message.key) : undefined;
  if (entry && entry.codeId !== message.codeId) {
    // The file changed since the context was warmed: start over with the new code.
    disposeEntry(entry);
    warm.delete(message.key);
    entry = undefined;
  }
  entry ??= prepare(message);
  entry.logs = [];
  const { context, runtime } = entry;
  let keep = message.warm;
  try {
    runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + message.timeoutMs));
    const arg = context.newString(message.eventJson);
    let value;
    try {
      value = unwrap(context, context.callFunction(entry.call, context.undefined, entry.fn, arg), 'lambda_failed');
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
          unwrap(context, { error: jobs.error }, 'lambda_failed');
        }
        const settled = context.getPromiseState(value);
        if (settled.type === 'pending') {
          value.dispose();
          throw coded('lambda_failed', 'lambda returned a promise that never settles (the sandbox has no timers or I/O)');
        }
        if (!settled.notAPromise) {
          value.dispose();
          value = unwrap(context, settled.type === 'fulfilled' ? { value: settled.value } : { error: settled.error }, 'lambda_failed');
        }
      }
    }
    const json = context.getProp(context.global, 'JSON');
    const stringify = context.getProp(json, 'stringify');
    json.dispose();
    const out = unwrap(context, context.callFunction(stringify, context.undefined, value), 'lambda_failed');
    stringify.dispose();
    value.dispose();
    const text = context.typeof(out) === 'string' ? context.getString(out) : 'null';
    out.dispose();
    if (text.length > message.maxResultBytes) {
      throw coded('payload_too_large', `lambda result exceeds ${message.maxResultBytes} bytes`);
    }
    return { resultJson: text, logs: entry.logs };
  } catch (error) {
    // After an interrupt or OOM the context state is unknown: never reuse it.
    keep = false;
    error.logs = entry.logs;
    throw error;
  } finally {
    if (keep) warm.set(message.key, entry);
    else {
      warm.delete(message.key);
      disposeEntry(entry);
    }
  }
}

parentPort.on('message', (message) => {
  if (message.op === 'dispose') {
    const entry = warm.get(message.key);
    if (entry) disposeEntry(entry);
    warm.delete(message.key);
    return;
  }
  try {
    const { resultJson, logs } = run(message);
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
});
parentPort.postMessage({ ready: true });
