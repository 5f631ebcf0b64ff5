// The repo service's settings (in addition to the common ones from @capstan/service). Secrets
// (service tokens, encryption keys) come from the environment or the configuration file only.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { Settings } from '@capstan/service';
import { internalServerSettings, tlsSettings } from '@capstan/service-identity';
import { DEFAULT_DENIED_NETWORKS } from './checkouts/egress.js';

const bytes = z.coerce.number().int().positive();
const ms = z.coerce.number().int().nonnegative();

export const repoSettings = {
  ...internalServerSettings({
    port: 8091,
    purpose: 'RepoService: credentials, manifests, listings',
    callers: '"api=<token>,sync=<token>,appset=<token>"',
  }),
  ...tlsSettings,
  'credentials.encryption-keys': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    description:
      'credential encryption keyring as JSON: {"active":"k2","keys":{"k1":"<base64 32 bytes>","k2":"…"}}',
  },
  'credentials.encryption-key-file': {
    schema: z.string().default(''),
    default: '',
    description: 'file holding the keyring JSON (used when credentials.encryption-keys is empty)',
  },
  'cache.dir': {
    schema: z.string().min(1),
    default: path.join(os.tmpdir(), 'capstan-repo'),
    description: 'directory for mirrors and checkouts (wiped at start)',
  },
  'cache.max-bytes': {
    schema: bytes,
    default: 4 * 1024 ** 3,
    description: 'bound of the checkout cache on disk; least recently used entries are evicted',
  },
  'repository.max-bytes': {
    schema: bytes,
    default: 1024 ** 3,
    description: 'a repository larger than this on disk is refused',
  },
  'revision.cache-ttl-ms': {
    schema: ms,
    default: 10_000,
    description: 'how long a branch/tag resolution is reused before asking the git server again',
  },
  'git.timeout-ms': { schema: bytes, default: 120_000, description: 'time limit of one git command' },
  'render.timeout-ms': {
    schema: bytes,
    default: 90_000,
    description: 'time limit of one kustomize/helm run',
  },
  'manifest.cache-entries': {
    schema: bytes,
    default: 2000,
    description: 'rendered manifest sets kept in memory',
  },
  'kustomize.path': {
    schema: z.string().default(''),
    default: '',
    description: 'kustomize binary (default: obtain-kustomize.sh cache, then PATH)',
  },
  'kustomize.build-options': {
    schema: z.string().max(4096).default(''),
    default: '',
    description:
      'extra arguments of every `kustomize build`, split on white space (Argo CD kustomize.buildOptions, e.g. "--load-restrictor LoadRestrictionsNone"); trusted operator input: flags such as --enable-helm or --enable-exec let repositories run more',
  },
  'kustomize.versions': {
    schema: z.record(z.string(), z.string()),
    default: {},
    flags: [],
    description:
      "argocd-cm's named kustomize binaries for spec.source.kustomize.version: kustomize.path.<v> (or the older kustomize.version.<v>) = binary, kustomize.buildOptions.<v> = that version's build options; from --argocd-config-dir or an applied argocd-cm (live: the next render)",
  },
  'helm.path': {
    schema: z.string().default(''),
    default: '',
    description:
      'helm binary (default: obtain-helm.sh cache, then PATH; Helm charts are refused without one)',
  },
  'chart.max-bytes': {
    schema: bytes,
    default: 100 * 1024 ** 2,
    description:
      'bound of what one helm pull or dependency build may download (chart sources and chart dependencies)',
  },
  'chart.cache-max-bytes': {
    schema: bytes,
    default: 1024 ** 3,
    description: 'bound of the pulled charts kept on disk; least recently used ones are evicted',
  },
  'jsonnet.path': {
    schema: z.string().default(''),
    default: '',
    description:
      'capstan-jsonnet binary (default: obtain-jsonnet.sh cache, then PATH; directories holding *.jsonnet files are refused without one)',
  },
  'ssh.known-hosts-file': {
    schema: z.string().default(''),
    default: '',
    description:
      'known_hosts trusted for SSH repositories (without it only credentials marked insecure reach SSH hosts)',
  },
  'poll.interval-ms': {
    schema: ms,
    default: 180_000,
    description: 'how often watched sources are re-checked for new commits (0 disables polling)',
  },
  'egress.denied-networks': {
    schema: z.string().default(DEFAULT_DENIED_NETWORKS),
    default: DEFAULT_DENIED_NETWORKS,
    description:
      'comma-separated addresses and CIDRs repository hosts may not resolve to (tenants choose URLs: loopback, link-local/cloud metadata, multicast by default; add private ranges to keep tenants off internal networks)',
  },
  'egress.allowed-networks': {
    schema: z.string().default(''),
    default: '',
    description:
      'comma-separated addresses and CIDRs allowed even though egress.denied-networks names them (e.g. a git server on this host)',
  },
} satisfies Settings;
