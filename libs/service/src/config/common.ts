// Settings every service has. Services spread these into their own settings object.
import { z } from 'zod';
import type { Settings } from './settings.js';

const bool = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);

export const booleanSetting = bool;

export const commonSettings = {
  'http.host': {
    schema: z.string().min(1),
    default: '127.0.0.1',
    description: 'address for /healthz, /readyz, /metrics',
  },
  'http.port': {
    schema: z.coerce.number().int().min(0).max(65535),
    default: 0,
    description: 'port for /healthz, /readyz, /metrics (0 picks a free port)',
  },
  'database.url': {
    schema: z.string().url(),
    default: 'postgres://postgres@127.0.0.1:5432/capstan',
    env: 'DATABASE_URL',
    secret: true,
    description: 'PostgreSQL connection URL (may hold a password: environment or file only)',
  },
  'nats.url': {
    schema: z.string().min(1),
    default: 'nats://127.0.0.1:4222',
    env: 'NATS_URL',
    description: 'NATS server(s)',
  },
  'nats.user': {
    schema: z.string().default(''),
    default: '',
    env: 'NATS_USER',
    description: "this service's bus user (`api`, `sync`, `repo`, `appset`; empty: anonymous)",
  },
  'nats.password': {
    schema: z.string().default(''),
    default: '',
    env: 'NATS_PASSWORD',
    secret: true,
    description: "the bus user's password (environment or configuration file only)",
  },
  'bus.namespace': {
    schema: z.string().regex(/^[a-z][a-z0-9_]*$/, 'expected lowercase letters, digits and _'),
    default: 'capstan',
    description: 'prefix of every NATS subject and stream (isolates installations sharing one NATS)',
  },
  'bus.stream-replicas': {
    schema: z.coerce.number().int().min(1).max(5),
    default: 1,
    description:
      "replicas of each JetStream stream the services create or update at start (1-5, JetStream's limit; more than 1 needs a NATS cluster of at least that many nodes). Give every service the same value",
  },
  'log.level': {
    schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']),
    default: 'info',
    description: 'log level',
  },
  'migrate-only': {
    schema: bool,
    default: false,
    flags: ['migrate-only'],
    description: 'apply the database migrations of this service (and the audit schema), then exit',
  },
  'settings.strict': {
    schema: bool,
    default: false,
    flags: ['settings-strict'],
    description:
      'refuse unknown or not implemented keys (configuration file, --argocd-config-dir, applied Argo CD ConfigMaps) instead of warning',
  },
  'argocd.config-dir': {
    schema: z.string(),
    default: '',
    flags: ['argocd-config-dir'],
    description:
      "directory of Argo CD ConfigMaps (argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm; Secret argocd-secret) read at start, Argo's flat keys; '' = none",
  },
  'shutdown.timeout-ms': {
    schema: z.coerce.number().int().positive(),
    default: 15_000,
    description: 'how long graceful shutdown may take before the process exits anyway',
  },
} satisfies Settings;
