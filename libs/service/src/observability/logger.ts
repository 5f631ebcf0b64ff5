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

export function createLogger(
  service: string,
  options: { level?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service },
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? destination({ sync: false }),
  );
}
