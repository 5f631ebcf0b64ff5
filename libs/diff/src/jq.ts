// jqPathExpressions run in jq itself (jq 1.7 compiled to WebAssembly, the jq-wasm package), in a
// worker thread so that a tenant's expression is bounded: the caller blocks at most `timeoutMs`
// (Argo's default jq timeout is 1 s) and a run past it terminates the worker, which frees its memory;
// the worker's JS heap is capped too. Comparison is synchronous (the reconciler's contract), so the
// calling thread waits on a shared flag and reads the answer with receiveMessageOnPort.
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

export const DEFAULT_JQ_TIMEOUT_MS = 1000;
/** The first run loads 1.3 MB of WebAssembly. */
const WARM_UP_TIMEOUT_MS = 15_000;

export class JqError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JqError';
  }
}

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const jq = require(workerData.jqPath);
const { port, flag } = workerData;
port.on('message', async ({ input, filter }) => {
  let answer;
  try {
    answer = { ok: true, output: await jq.raw(input, filter, ['-c']) };
  } catch (error) {
    answer = { ok: false, error: String((error && error.message) || error) };
  }
  port.postMessage(answer);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

interface Answer {
  ok: boolean;
  output?: string;
  error?: string;
}

/** Node 16+ has Atomics.waitAsync; the project's TypeScript lib (ES2023) does not declare it. */
interface AtomicsWithWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
    timeout: number,
  ): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
}

class JqWorker {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const jqPath = createRequire(import.meta.url).resolve('jq-wasm');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { jqPath, port: port2, flag: this.flag },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
    });
    this.worker.unref();
    this.port.unref();
  }

  private post(input: string, filter: string): void {
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ input, filter });
  }

  private take(): Answer {
    const received = receiveMessageOnPort(this.port);
    if (!received) throw new JqError('jq worker gave no answer');
    return received.message as Answer;
  }

  /** Runs synchronously; false when the run did not finish in time (the worker is then unusable). */
  runSync(input: string, filter: string, timeoutMs: number): Answer | undefined {
    this.post(input, filter);
    if (Atomics.wait(this.flag, 0, 0, timeoutMs) === 'timed-out' && Atomics.load(this.flag, 0) === 0)
      return undefined;
    return this.take();
  }

  async run(input: string, filter: string, timeoutMs: number): Promise<Answer | undefined> {
    this.post(input, filter);
    const waited = (Atomics as unknown as AtomicsWithWaitAsync).waitAsync(this.flag, 0, 0, timeoutMs);
    const result = waited.async ? await waited.value : waited.value;
    if (result === 'timed-out' && Atomics.load(this.flag, 0) === 0) return undefined;
    return this.take();
  }

  terminate(): void {
    void this.worker.terminate();
  }
}

let shared: JqWorker | undefined;

function worker(): JqWorker {
  shared ??= new JqWorker();
  return shared;
}

function outcome(answer: Answer | undefined, timeoutMs: number): unknown {
  if (!answer) {
    shared?.terminate();
    shared = undefined;
    throw new JqError(`JQ patch execution timed out (${timeoutMs}ms)`);
  }
  if (!answer.ok) throw new JqError(`JQ patch returned error: ${answer.error ?? 'unknown'}`);
  const lines = (answer.output ?? '').split('\n').filter((line) => line.length > 0);
  if (lines.length === 0) throw new JqError('JQ patch did not return any data');
  if (lines.length > 1) throw new JqError('JQ patch returned multiple objects');
  return JSON.parse(lines[0]!) as unknown;
}

/** `del(expression)` applied to `value`, as Argo applies a jqPathExpression. */
export function jqDeleteSync(value: unknown, expression: string, timeoutMs = DEFAULT_JQ_TIMEOUT_MS): unknown {
  return outcome(worker().runSync(JSON.stringify(value), `del(${expression})`, timeoutMs), timeoutMs);
}

/** Checks that an expression compiles and runs (and loads jq ahead of the first comparison). */
export async function checkJqExpression(expression: string): Promise<void> {
  // Compiled, never run: an expression may rightly fail on an empty object (`.spec.x[]`).
  const answer = await worker().run('{}', `if false then del(${expression}) else . end`, WARM_UP_TIMEOUT_MS);
  outcome(answer, WARM_UP_TIMEOUT_MS);
}
