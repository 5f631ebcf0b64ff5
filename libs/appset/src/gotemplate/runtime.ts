// The Go template module (gotemplate/, compiled to WebAssembly by scripts/build-gotemplate.sh),
// loaded once and run in-process on a worker thread: Node's main thread never blocks on a template,
// and a render that runs past its time limit is stopped by terminating the worker (Go code cannot be
// interrupted from JavaScript otherwise); the next call starts a fresh worker from the module that
// was compiled once. Requests and responses are JSON strings, one per batch.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Where scripts/build-gotemplate.sh puts the module: <package>/dist/gotemplate/ (from src/ or dist/). */
export function defaultModuleDir(): string {
  return fileURLToPath(new URL('../../dist/gotemplate/', import.meta.url));
}

export class TemplateModuleError extends Error {
  override readonly name = 'TemplateModuleError';
}

/** A render or generator call that ran past the time limit (the worker was stopped). */
export class TemplateTimeoutError extends Error {
  override readonly name = 'TemplateTimeoutError';
}

// Runs inside the worker (CommonJS, eval): loads wasm_exec.js, instantiates the compiled module and
// answers { id, request } messages synchronously with the module's capstanAppset function.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.wasmExec);
const go = new globalThis.Go();
const ready = new Promise((resolve) => { globalThis.capstanAppsetReady = resolve; });
WebAssembly.instantiate(workerData.module, go.importObject).then((instance) => {
  go.run(instance);
  return ready;
}).then(() => {
  parentPort.on('message', ({ id, request }) => {
    let response;
    try { response = globalThis.capstanAppset(request); }
    catch (err) { response = JSON.stringify({ error: 'template module failed: ' + (err && err.message) }); }
    parentPort.postMessage({ id, response });
  });
  parentPort.postMessage({ ready: true });
}, (err) => parentPort.postMessage({ fatal: String(err && err.message || err) }));
`;

// Node's WebAssembly global, which @types/node 20 does not declare.
type CompiledModule = object;
const { WebAssembly: webAssembly } = globalThis as unknown as {
  WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledModule> };
};

interface Pending {
  resolve: (v: string) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export interface GoTemplateModuleOptions {
  /** Directory holding appset.wasm and wasm_exec.js (default: the package's dist/gotemplate/). */
  dir?: string;
}

export class GoTemplateModule {
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly module: CompiledModule,
    private readonly wasmExec: string,
  ) {}

  /** Compiles the module once; the worker starts on first use (or call warm()). */
  static async load(opts: GoTemplateModuleOptions = {}): Promise<GoTemplateModule> {
    const dir = opts.dir ?? defaultModuleDir();
    const wasm = `${dir.replace(/\/$/, '')}/appset.wasm`;
    const wasmExec = `${dir.replace(/\/$/, '')}/wasm_exec.js`;
    if (!existsSync(wasm) || !existsSync(wasmExec))
      throw new TemplateModuleError(
        `the ApplicationSet template module is not built (${wasm}); run: bash libs/appset/scripts/build-gotemplate.sh`,
      );
    const module = await webAssembly.compile(await readFile(wasm));
    return new GoTemplateModule(module, wasmExec);
  }

  /** Starts the worker now, so the first request does not pay for it. */
  async warm(): Promise<void> {
    await this.ensureWorker();
  }

  /** Sends one request; rejects with TemplateTimeoutError after timeoutMs (and restarts the worker). */
  async call(request: string, timeoutMs: number): Promise<string> {
    if (this.closed) throw new TemplateModuleError('the template module is closed');
    const worker = await this.ensureWorker();
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new TemplateTimeoutError(`template rendering exceeded the time limit of ${timeoutMs} ms`));
        this.kill(
          worker,
          new TemplateTimeoutError('stopped with another request that exceeded the time limit'),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, request });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = undefined;
    if (w) {
      this.failAll(new TemplateModuleError('the template module is closed'));
      await w.terminate();
    }
  }

  /**
   * Stops a worker. Only the current worker's requests are pending (a replaced worker's were failed
   * when it was replaced), so only the current one fails them: a killed worker's late 'error' or
   * 'exit' must not reject what its successor is working on.
   */
  private kill(worker: Worker, reason: Error): void {
    if (this.worker === worker) {
      this.worker = undefined;
      this.failAll(reason);
    }
    void worker.terminate();
  }

  private failAll(reason: Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(reason);
      this.pending.delete(id);
    }
  }

  private ensureWorker(): Promise<Worker> {
    if (this.worker) return Promise.resolve(this.worker);
    this.starting ??= new Promise<Worker>((resolve, reject) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module: this.module, wasmExec: this.wasmExec },
      });
      worker.unref();
      worker.on('message', (msg: { id?: number; response?: string; ready?: boolean; fatal?: string }) => {
        if (msg.ready) {
          this.worker = worker;
          this.starting = undefined;
          resolve(worker);
          return;
        }
        if (msg.fatal) {
          this.starting = undefined;
          reject(new TemplateModuleError(`the template module failed to start: ${msg.fatal}`));
          return;
        }
        const p = msg.id === undefined ? undefined : this.pending.get(msg.id);
        if (!p || msg.id === undefined) return;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        p.resolve(msg.response ?? '');
      });
      worker.on('error', (err) => {
        this.starting = undefined;
        reject(err);
        this.kill(worker, new TemplateModuleError(`the template module failed: ${err.message}`));
      });
      worker.on('exit', () => {
        // A worker killed after a time-out exits later, maybe while its successor works: ignore it.
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.failAll(new TemplateModuleError('the template module stopped'));
      });
    });
    return this.starting;
  }
}
