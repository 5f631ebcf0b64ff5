// Several engines, each with its own Go template worker, lent out one generation at a time. The
// engine stops its worker when a render runs past the time limit, failing whatever else that worker
// was rendering; with one generation per worker, a set that runs out of time fails alone, never
// another tenant's request or another set's reconcile. A generation waits for a free engine.
import {
  AppSetEngine,
  engineIdentity,
  type EngineOptions,
  type GenerateRequest,
  type GenerateResult,
} from '@capstan/appset-engine';

export interface Generator {
  /** Identifies the engine's code: equal inputs and identity, equal output (see reconcile/inputs.ts). */
  readonly identity: string;
  generate(req: GenerateRequest): Promise<GenerateResult>;
}

export class EnginePool implements Generator {
  private readonly free: AppSetEngine[];
  private readonly waiting: ((e: AppSetEngine) => void)[] = [];

  private constructor(
    private readonly engines: AppSetEngine[],
    readonly identity: string,
  ) {
    this.free = [...engines];
  }

  static async load(size: number, opts: EngineOptions = {}): Promise<EnginePool> {
    const engines: AppSetEngine[] = [];
    try {
      for (let i = 0; i < size; i++) engines.push(await AppSetEngine.load(opts));
    } catch (err) {
      await Promise.all(engines.map((e) => e.close()));
      throw err;
    }
    return new EnginePool(engines, await engineIdentity());
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const engine =
      this.free.pop() ?? (await new Promise<AppSetEngine>((resolve) => this.waiting.push(resolve)));
    try {
      return await engine.generate(req);
    } finally {
      const next = this.waiting.shift();
      if (next) next(engine);
      else this.free.push(engine);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.close()));
  }
}
