// The fingerprint of a set's inputs: every input that can change a generation changes it, the order
// of reads does not, and Go templates calling a function whose result changes by itself are never
// considered unchanged.
import { describe, expect, it } from 'vitest';
import type { StoredAppSet } from '../sets/manifest.js';
import {
  fingerprintOf,
  reconciledInputs,
  rendersDeterministically,
  type FingerprintParts,
} from './inputs.js';

const set = (spec: Record<string, unknown>): StoredAppSet =>
  ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: 'apps', namespace: 'argocd' },
    spec: {
      generators: [{ git: { repoURL: 'https://git.example.com/a.git', directories: [{ path: '*' }] } }],
      template: { metadata: { name: '{{path.basename}}' }, spec: { project: 'team-a' } },
      ...spec,
    },
  }) as unknown as StoredAppSet;

const repoA = { repoURL: 'https://git.example.com/a.git', revision: 'HEAD', sha: 'a'.repeat(40) };
const repoB = { repoURL: 'https://git.example.com/b.git', revision: 'main', sha: 'b'.repeat(40) };
const prod = { name: 'prod', server: 'https://prod.example.com', labels: { env: 'prod' } };

const base: FingerprintParts = {
  manifest: set({}),
  engine: 'engine-1',
  limits: { maxApplications: 100 },
  owner: 'alice',
  observed: { revisions: [repoA, repoB], clusters: [prod] },
};

describe('fingerprintOf', () => {
  it('is the same for the same inputs, whatever order the repositories were read in', () => {
    expect(fingerprintOf({ ...base, observed: { revisions: [repoB, repoA], clusters: [prod] } })).toBe(
      fingerprintOf(base),
    );
  });

  it.each<[string, Partial<FingerprintParts>]>([
    ['the manifest', { manifest: set({ goTemplate: true }) }],
    ['the engine', { engine: 'engine-2' }],
    ['the limits', { limits: { maxApplications: 101 } }],
    ['the owner', { owner: 'bob' }],
    [
      'a commit (a push)',
      { observed: { revisions: [{ ...repoA, sha: 'c'.repeat(40) }, repoB], clusters: [prod] } },
    ],
    ['a repository read or not', { observed: { revisions: [repoA], clusters: [prod] } }],
    [
      'a cluster (labels)',
      { observed: { revisions: [repoA, repoB], clusters: [{ ...prod, labels: { env: 'staging' } }] } },
    ],
    [
      'a cluster added',
      { observed: { revisions: [repoA, repoB], clusters: [prod, { ...prod, name: 'dr' }] } },
    ],
    ['the registry read or not', { observed: { revisions: [repoA, repoB], clusters: null } }],
  ])('changes with %s', (_what, change) => {
    expect(fingerprintOf({ ...base, ...change })).not.toBe(fingerprintOf(base));
  });

  it('keeps what to observe again: each repository and revision once, and whether clusters were read', () => {
    const inputs = reconciledInputs({
      ...base,
      observed: { revisions: [repoB, repoA, repoB], clusters: null },
    });
    expect(inputs.repos).toEqual([
      { repoURL: repoA.repoURL, revision: 'HEAD' },
      { repoURL: repoB.repoURL, revision: 'main' },
    ]);
    expect(inputs.readsClusters).toBe(false);
    expect(inputs.fingerprint).toBe(
      fingerprintOf({ ...base, observed: { revisions: [repoA, repoB], clusters: null } }),
    );
  });
});

describe('rendersDeterministically', () => {
  it.each([
    ['{{ now | date "2006" }}', false],
    ['{{ randAlphaNum 5 }}', false],
    ['{{uuidv4}}', false],
    ['{{ (genPrivateKey "rsa") }}', false],
    ['{{ env "HOME" }}', false],
    ['{{ .path.basename }}', true],
    ['{{ .env }}-{{ .values.date }}', true],
    ['{{ upper .name }}', true],
  ])('goTemplate %s: %s', (name, expected) => {
    expect(
      rendersDeterministically(set({ goTemplate: true, template: { metadata: { name }, spec: {} } })),
    ).toBe(expected);
  });

  it('looks at templatePatch and values too', () => {
    expect(rendersDeterministically(set({ goTemplate: true, templatePatch: 'x: {{ now }}' }))).toBe(false);
  });

  it('is always deterministic without goTemplate (fasttemplate has no functions)', () => {
    expect(rendersDeterministically(set({ template: { metadata: { name: '{{ now }}' }, spec: {} } }))).toBe(
      true,
    );
  });
});
