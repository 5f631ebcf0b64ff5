// Server-side latency of every call, by operation, transport and outcome: the figure operators alert
// on, and the one benchmarks compare with what clients observe.
import { Registry } from 'prom-client';
import { errorCodeOf, inSpan, metricOf, SpanKind } from '@capstan/service';

export class RequestMetrics {
  private readonly histogram;

  /** Without a registry (tests that do not look), the figures are kept in one of their own. */
  constructor(registry?: Registry) {
    this.histogram = metricOf(registry ?? new Registry(), 'apiRequestDuration');
  }

  /** Runs `fn`, recording how long it took and how it ended. */
  async time<T>(operation: string, transport: string, fn: () => Promise<T>): Promise<T> {
    // Traced too (when tracing is on): events and internal calls made for it continue its trace.
    return inSpan(
      `api/${operation}`,
      { 'rpc.method': operation, 'capstan.transport': transport },
      () => this.timed(operation, transport, fn),
      { kind: SpanKind.SERVER },
    );
  }

  private async timed<T>(operation: string, transport: string, fn: () => Promise<T>): Promise<T> {
    const end = this.histogram.startTimer({ operation, transport });
    try {
      const out = await fn();
      end({ code: 'OK' });
      return out;
    } catch (err) {
      end({ code: errorCodeOf(err) });
      throw err;
    }
  }
}
