// Server-side latency of every call, by operation, transport and outcome: the figure operators alert
// on, and the one benchmarks compare with what clients observe.
import { Histogram, type Registry } from 'prom-client';
import { errorCodeOf } from '@capstan/service';

export class RequestMetrics {
  private readonly histogram: Histogram<'operation' | 'transport' | 'code'>;

  constructor(registry?: Registry) {
    this.histogram = new Histogram({
      name: 'capstan_api_request_duration_seconds',
      help: 'time from a call reaching the api to its answer',
      labelNames: ['operation', 'transport', 'code'],
      buckets: [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: registry ? [registry] : [],
    });
  }

  /** Runs `fn`, recording how long it took and how it ended. */
  async time<T>(operation: string, transport: string, fn: () => Promise<T>): Promise<T> {
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
