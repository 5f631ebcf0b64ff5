// The appset service's settings (on top of the common ones in @capstan/service). Secrets (service
// tokens, the TLS key) come from the environment or the configuration file only.
import { z } from 'zod';
import type { Settings } from '@capstan/service';
import { internalServerSettings, tlsSettings } from '@capstan/service-identity';
import { DEFAULT_LIMITS } from '@capstan/appset-engine';

const positive = z.coerce.number().int().positive();

export const appsetSettings = {
  ...internalServerSettings({
    port: 8092,
    purpose: 'AppSetService, called by the api only',
    callers: '"api=<token>"',
  }),
  ...tlsSettings,
  'api.address': {
    schema: z.string().min(1),
    default: '127.0.0.1:8083',
    description: 'host:port of the api internal gRPC (ApplicationSetWritesService, DelegationService)',
  },
  'api.service-token': {
    schema: z.string(),
    default: '',
    secret: true,
    description: 'service token the appset service authenticates to the api with (environment or file only)',
  },
  'repo.address': {
    schema: z.string().min(1),
    default: '127.0.0.1:8091',
    description: 'host:port of the repo service internal gRPC (git generators: listings, revisions)',
  },
  'repo.service-token': {
    schema: z.string(),
    default: '',
    secret: true,
    description:
      'service token the appset service authenticates to the repo service with (environment or file only)',
  },
  'generation.max-applications': {
    schema: positive,
    default: DEFAULT_LIMITS.maxApplications,
    description: 'a set that generates more Applications than this is refused',
  },
  'generation.max-output-bytes': {
    schema: positive,
    default: DEFAULT_LIMITS.maxOutputBytes,
    description: 'bound on any single rendered string (a template field, a templatePatch)',
  },
  'generation.max-total-bytes': {
    schema: positive,
    default: DEFAULT_LIMITS.maxTotalOutputBytes,
    description: 'bound on the JSON size of all Applications one set generates',
  },
  'generation.timeout-ms': {
    schema: positive,
    default: DEFAULT_LIMITS.timeoutMs,
    description: 'wall-clock budget of one generation (generators and templates)',
  },
  'generation.workers': {
    schema: z.coerce.number().int().min(1).max(32),
    default: 3,
    description:
      'Go template workers; each runs one generation at a time, so a set that exceeds the time limit fails alone',
  },
  'reconcile.requeue-seconds': {
    schema: positive,
    default: 180,
    description:
      "how often a set is regenerated without a trigger (Argo CD's default requeueAfterSeconds; a git generator's requeueAfterSeconds wins)",
  },
  'reconcile.tick-ms': {
    schema: positive,
    default: 5000,
    description: 'how often the reconciler looks for sets that are due',
  },
  'reconcile.parallelism': {
    schema: z.coerce.number().int().min(1).max(64),
    default: 2,
    description: 'sets reconciled at the same time by this replica',
  },
} satisfies Settings;
