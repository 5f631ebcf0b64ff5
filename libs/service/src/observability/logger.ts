// Structured JSON logs. Secrets are never handed to the logger on purpose; the redaction below is
// the second line of defence for fields whose names say they hold one.
import { pino, destination, stdTimeFunctions, type Logger } from 'pino';

export type { Logger } from 'pino';

const secretKeys = [
  'password',
  'token',
  'secret',
  'authorization',
  'sshPrivateKey',
  'privateKey',
  'bearerToken',
  'apiToken',
  'ciphertext',
  'key',
];

export const redactPaths = [
  ...secretKeys,
  ...secretKeys.map((k) => `*.${k}`),
  ...secretKeys.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'metadata.authorization',
];

// pino copies a level into each child when it is made: to change the level of a running service
// (an applied argocd-cmd-params-cm *.log.level), every child made so far is followed, weakly.
const childrenOf = new WeakMap<Logger, Set<WeakRef<Logger>>>();
const forget = new FinalizationRegistry<{ set: Set<WeakRef<Logger>>; ref: WeakRef<Logger> }>(({ set, ref }) =>
  set.delete(ref),
);

export function createLogger(
  service: string,
  options: { level?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const children = new Set<WeakRef<Logger>>();
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: { service },
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Inherited by every child, so grandchildren are followed too.
      onChild: (child) => {
        const ref = new WeakRef(child);
        children.add(ref);
        forget.register(child, { set: children, ref });
      },
    },
    options.destination ?? destination({ sync: false }),
  );
  childrenOf.set(logger, children);
  return logger;
}

/** Sets the level of a logger made by createLogger and of every child it has made, at once. */
export function setLogLevel(logger: Logger, level: string): void {
  logger.level = level;
  for (const ref of childrenOf.get(logger) ?? []) {
    const child = ref.deref();
    if (child) child.level = level;
  }
}
