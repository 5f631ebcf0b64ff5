// Argo CD's multiple sources at write time: `ref` names, `$ref/…` value files naming a declared ref
// and staying inside that source's repository, and `source` beside `sources` refused.
import { describe, expect, it } from 'vitest';
import { validateApplication } from '../project/validate.js';
import { applicationSources, hasMultipleSources, type Application } from './schemas.js';
import { refFileProblem } from './source-option-issues.js';

const chart = (helm: Record<string, unknown>) => ({
  repoURL: 'https://git.example.com/charts.git',
  path: 'charts/web',
  helm,
});
const values = { repoURL: 'https://git.example.com/values.git', targetRevision: 'main', ref: 'values' };

const app = (spec: Record<string, unknown>) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'web' },
  spec: {
    project: 'default',
    destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
    ...spec,
  },
});
const issues = (spec: Record<string, unknown>) => {
  const r = validateApplication(app(spec));
  return r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`);
};

describe('spec.sources (Argo CD multiple sources)', () => {
  it('accepts a chart reading value files of a ref source', () => {
    expect(
      issues({
        sources: [chart({ valueFiles: ['$values/envs/prod/values.yaml', 'values.yaml'] }), values],
      }),
    ).toEqual([]);
  });

  it('refuses a $ref file naming no declared ref, with the available ones', () => {
    expect(issues({ sources: [chart({ valueFiles: ['$other/values.yaml'] }), values] })).toEqual([
      'spec.sources[0].helm.valueFiles[0]: source referenced "$other", which is not one of the available sources ($values)',
    ]);
    expect(
      issues({ sources: [chart({ fileParameters: [{ name: 'cfg', path: '$values/cfg.toml' }] })] }),
    ).toEqual([
      `spec.sources[0].helm.fileParameters[0].path: source referenced "$values", but no source has a 'ref' field defined`,
    ]);
  });

  it('refuses a $ref file climbing out of the ref source repository', () => {
    expect(issues({ sources: [chart({ valueFiles: ['$values/../../etc/passwd'] }), values] })).toEqual([
      'spec.sources[0].helm.valueFiles[0]: must resolve inside the repository of $values (it climbs above the root with "..")',
    ]);
    expect(issues({ sources: [chart({ valueFiles: ['$values/'] }), values] })).toEqual([
      'spec.sources[0].helm.valueFiles[0]: must name a file of the source $values ($values/path/values.yaml)',
    ]);
  });

  it("checks ref names as Argo CD does, each declared once, never a chart's", () => {
    expect(
      issues({
        sources: [
          { ...values, ref: 'bad/name' },
          { ...values, ref: 'v' },
          { ...values, ref: 'v' },
        ],
      }),
    ).toEqual([
      "spec.sources[0].ref: sources.ref bad/name cannot contain any special characters except '_' and '-'",
      'spec.sources[2].ref: invalid sources: multiple sources had the same `ref` key',
    ]);
    expect(
      issues({
        sources: [
          chart({ valueFiles: ['$c/values.yaml'] }),
          { repoURL: 'https://charts.example.com', chart: 'x', targetRevision: '1.0.0', ref: 'c' },
        ],
      }),
    ).toEqual([
      "spec.sources[0].helm.valueFiles[0]: source has a 'chart' field defined, but Helm charts are not yet not supported for 'ref' sources",
    ]);
  });

  it('refuses source and sources together', () => {
    expect(issues({ source: chart({}), sources: [values] })).toEqual([
      'spec.source: source and sources are both set: set one (Argo CD ignores spec.source when spec.sources is set)',
    ]);
  });

  it('keeps $-prefixed files ordinary paths for a single source, as Argo CD', () => {
    expect(issues({ source: chart({ valueFiles: ['$values/x.yaml'] }) })).toEqual([]);
    expect(refFileProblem('$values/x.yaml', undefined)).toBeUndefined();
    expect(refFileProblem('values/x.yaml', { refs: new Set(['values']) })).toBeUndefined();
    expect(refFileProblem('$values/a/./b/../v.yaml', { refs: new Set(['values']) })).toEqual({
      ref: 'values',
      file: 'a/v.yaml',
    });
  });

  it("gives Argo CD's sources: sources when set, else source", () => {
    const multi = validateApplication(app({ sources: [values] }));
    const single = validateApplication(app({ source: values }));
    if (!multi.ok || !single.ok) throw new Error('valid');
    expect(applicationSources(multi.value as Application)).toHaveLength(1);
    expect(hasMultipleSources(multi.value as Application)).toBe(true);
    expect(hasMultipleSources(single.value as Application)).toBe(false);
  });
});
