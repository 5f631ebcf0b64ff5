// Typed calls into the Go template module (gotemplate/*.go): one JSON request per batch.
import type { GoTemplateModule } from '../gotemplate/runtime.js';

export type Params = Record<string, unknown>;

export interface RenderOptions {
  readonly goTemplate: boolean;
  readonly options: readonly string[];
  /** Bound on each rendered string. */
  readonly maxBytes: number;
}

/** A failure reported by the Go side: Argo's own error text. */
export class GoSideError extends Error {
  override readonly name = 'GoSideError';
}

interface Response {
  value?: unknown;
  items?: { value?: unknown; error?: string }[];
  error?: string;
}

export class Bridge {
  constructor(
    private readonly module: GoTemplateModule,
    private readonly opts: RenderOptions,
    /** Milliseconds left for this generation; each call may use at most that. */
    private readonly remainingMs: () => number,
  ) {}

  private async call(op: string, body: Record<string, unknown>): Promise<Response> {
    const request = JSON.stringify({
      op,
      goTemplate: this.opts.goTemplate,
      options: this.opts.options,
      maxBytes: this.opts.maxBytes,
      ...body,
    });
    const res = JSON.parse(await this.module.call(request, Math.max(1, this.remainingMs()))) as Response;
    if (res.error !== undefined) throw new GoSideError(res.error);
    return res;
  }

  async value<T>(op: string, body: Record<string, unknown>): Promise<T> {
    return (await this.call(op, body)).value as T;
  }

  async items<T>(op: string, body: Record<string, unknown>): Promise<({ value: T } | { error: string })[]> {
    const res = await this.call(op, body);
    return (res.items ?? []).map((i) =>
      i.error !== undefined ? { error: i.error } : { value: i.value as T },
    );
  }
}
