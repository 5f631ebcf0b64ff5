// The skeleton every service shares: configuration, logger, ops endpoints, metrics and graceful
// shutdown. A service's main.ts calls runService with its settings and a `start` function that wires
// db, bus and handlers and registers what must be stopped; nothing else lives in main.ts.
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  loadConfigReport,
  type ConfigOf,
  type ConfigReport,
  type ConfigSources,
  type Settings,
} from '../config/settings.js';
import type { CapstanService } from '@capstan/policy';
import { commonSettings } from '../config/common.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { startOpsServer, type ReadinessCheck } from '../observability/http.js';
import { startTracing } from '../observability/tracing.js';
import { CapstanError } from '../errors/errors.js';

/**
 * Calls the stop functions last registered first (what started last depends on what started before
 * it), logging a failure and going on, then empties the list.
 */
export async function stopInReverse(
  stops: { name: string; stop: () => Promise<void> | void }[],
  logger: Logger,
): Promise<void> {
  for (const { name, stop } of stops.reverse()) {
    try {
      await stop();
    } catch (err) {
      logger.error({ err, component: name }, 'error while stopping');
    }
  }
  stops.length = 0;
}

/**
 * Thrown by a service's start function once its migrations are applied when `--migrate-only` is set:
 * the service stops what it started and the process exits 0 without serving.
 */
export class MigrationsOnlyDone extends Error {
  constructor() {
    super('migrations applied');
    this.name = 'MigrationsOnlyDone';
  }
}

export interface ServiceContext<C> {
  readonly name: string;
  readonly config: C;
  readonly logger: Logger;
  readonly metrics: Registry;
  /** Where each setting came from (for LiveSettings and `capstan admin settings --show-source`). */
  readonly configReport?: ConfigReport;
  /** Readiness is the conjunction of every check (database reachable, bus connected, ...). */
  addReadinessCheck(name: string, check: ReadinessCheck): void;
  /** Stop functions run in reverse order of registration: consumers drain before the bus closes. */
  onShutdown(name: string, stop: () => Promise<void> | void): void;
}

export interface RunningService<C> {
  readonly context: ServiceContext<C>;
  readonly opsPort: number;
  stop(): Promise<void>;
}

export type CommonConfig = ConfigOf<typeof commonSettings>;

/** prom-client eventLoopMonitoringPrecision: how often the event-loop delay is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

const SERVICES = new Set<string>(['api', 'sync', 'repo', 'appset']);

export async function startService<S extends Settings>(options: {
  name: string;
  settings: S;
  sources?: ConfigSources;
  start: (ctx: ServiceContext<ConfigOf<S> & CommonConfig>) => Promise<void>;
  logDestination?: NodeJS.WritableStream;
}): Promise<RunningService<ConfigOf<S> & CommonConfig>> {
  const startedAt = performance.now();
  const service = SERVICES.has(options.name) ? (options.name as CapstanService) : undefined;
  const loaded = loadConfigReport(
    { ...commonSettings, ...options.settings },
    { ...(service ? { service } : {}), ...options.sources },
  );
  const config = loaded.config as ConfigOf<S> & CommonConfig;
  const logger = createLogger(options.name, {
    level: config['log.level'],
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  // Never silent: every key given that this service does not know or implement is named at start.
  for (const warning of loaded.report.warnings) logger.warn({ setting: true }, warning);
  const metrics = new Registry();
  metrics.setDefaultLabels({ service: options.name });
  // The event-loop delay histogram samples with a libuv timer: at prom-client's default 10 ms that
  // timer alone woke each idle service 100 times a second (about 0.4 s CPU a minute, more than all of
  // its own work at rest). At 100 ms a stall of the loop longer than that is still measured.
  collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const readiness = new Map<string, ReadinessCheck>();
  const stops: { name: string; stop: () => Promise<void> | void }[] = [];
  let shuttingDown = false;

  const ctx: ServiceContext<ConfigOf<S> & CommonConfig> = {
    name: options.name,
    config,
    logger,
    metrics,
    configReport: loaded.report,
    addReadinessCheck: (name, check) => readiness.set(name, check),
    onShutdown: (name, stop) => stops.push({ name, stop }),
  };

  // Traces (OTEL_EXPORTER_OTLP_ENDPOINT): started first and stopped last, so no span of the service is lost.
  const tracing = startTracing(options.name, options.sources?.env ?? {});
  if (tracing) {
    logger.info({ otlpTracesUrl: withoutUserinfo(tracing.url) }, 'exporting traces');
    stops.unshift({ name: 'tracing', stop: () => tracing.shutdown() });
  }
  const stopAll = () => stopInReverse(stops, logger);

  try {
    await options.start(ctx);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const ops = await startOpsServer({
    host: config['http.host'],
    port: config['http.port'],
    registry: metrics,
    readiness,
    isShuttingDown: () => shuttingDown,
  });
  logger.info({ opsPort: ops.port, startupMs: Math.round(performance.now() - startedAt) }, 'service started');

  let stopping: Promise<void> | undefined;
  return {
    context: ctx,
    opsPort: ops.port,
    stop: () => {
      stopping ??= (async () => {
        shuttingDown = true;
        logger.info('shutting down');
        await stopAll();
        await ops.close();
        logger.info('stopped');
        logger.flush();
      })();
      return stopping;
    },
  };
}

/** A URL as it may be logged: any user and password removed. */
function withoutUserinfo(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Entry point used by each service's main.ts: starts, then stops gracefully on SIGTERM/SIGINT. */
export async function runService<S extends Settings>(options: {
  name: string;
  settings: S;
  start: (ctx: ServiceContext<ConfigOf<S> & CommonConfig>) => Promise<void>;
}): Promise<void> {
  let running: RunningService<ConfigOf<S> & CommonConfig>;
  try {
    running = await startService({ ...options, sources: { argv: process.argv.slice(2), env: process.env } });
  } catch (err) {
    if (err instanceof MigrationsOnlyDone) {
      process.stderr.write(`${options.name}: migrations applied\n`);
      process.exit(0);
    }
    const message = err instanceof CapstanError ? err.message : (err as Error).message;
    process.stderr.write(`${options.name}: failed to start: ${message}\n`);
    process.exit(1);
  }
  const onSignal = (signal: string) => {
    const timeout = setTimeout(() => {
      process.stderr.write(`${options.name}: graceful shutdown timed out after ${signal}\n`);
      process.exit(1);
    }, running.context.config['shutdown.timeout-ms']);
    timeout.unref();
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
}
