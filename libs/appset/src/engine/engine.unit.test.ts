// The engine against Argo CD's documented behaviour and its generator tests' vectors (Argo CD v3.2:
// docs/operator-manual/applicationset/*.md, applicationset/generators/*_test.go). The providers are
// plain in-memory implementations of the interfaces (the engine does no I/O of its own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppSetEngine, AppSetError, generatorInputs, parseApplicationSet, type Providers } from '../index.js';

let engine: AppSetEngine;
beforeAll(async () => {
  engine = await AppSetEngine.load();
});
afterAll(async () => {
  await engine.close();
});

const template = (name = '{{cluster}}-guestbook', extra: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: {
    project: 'default',
    source: { repoURL: 'https://github.com/argoproj/argo-cd.git', targetRevision: 'HEAD', path: 'guestbook' },
    destination: { server: '{{url}}', namespace: 'guestbook' },
    ...extra,
  },
});

function appset(spec: Record<string, unknown>, name = 'guestbook') {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name, namespace: 'argocd' },
    spec,
  };
}

async function names(spec: Record<string, unknown>, providers?: Providers) {
  const r = await engine.generate({ applicationSet: appset(spec), providers });
  return r.applications.map((a) => a.metadata.name);
}

async function failure(spec: Record<string, unknown>, providers?: Providers): Promise<AppSetError> {
  try {
    await engine.generate({ applicationSet: appset(spec), providers });
  } catch (err) {
    if (err instanceof AppSetError) return err;
    throw err;
  }
  throw new Error('expected the generation to fail');
}

describe('list generator', () => {
  it('renders the documented example (Generators-List.md) into the Application shape, sorted by name', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [
          {
            list: {
              elements: [
                { cluster: 'engineering-prod', url: 'https://kubernetes.default.svc' },
                { cluster: 'engineering-dev', url: 'https://1.2.3.4' },
              ],
            },
          },
        ],
        template: template(),
      }),
    });
    expect(r.applications).toEqual([
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: {
          name: 'engineering-dev-guestbook',
          namespace: 'argocd',
          finalizers: ['resources-finalizer.argocd.argoproj.io'],
        },
        spec: {
          project: 'default',
          source: {
            repoURL: 'https://github.com/argoproj/argo-cd.git',
            targetRevision: 'HEAD',
            path: 'guestbook',
          },
          destination: { server: 'https://1.2.3.4', namespace: 'guestbook' },
        },
      },
      expect.objectContaining({ metadata: expect.objectContaining({ name: 'engineering-prod-guestbook' }) }),
    ]);
  });

  it('puts values.* params in scope, leaves unknown params as written, and refuses non-string values', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [{ list: { elements: [{ cluster: 'a', url: 'https://a', values: { ns: 'team-a' } }] } }],
        template: {
          ...template(),
          metadata: { name: '{{cluster}}', labels: { keep: '{{ unknown.param }}', ns: '{{values.ns}}' } },
        },
      }),
    });
    expect(r.applications[0]!.metadata.labels).toEqual({ keep: '{{ unknown.param }}', ns: 'team-a' });
    // Argo's own text (list.go wraps a nil error).
    const err = await failure({
      generators: [{ list: { elements: [{ cluster: 'a', url: 'https://a', replicas: 3 }] } }],
      template: template(),
    });
    expect(err.issues).toEqual([
      { path: 'spec.generators[0]', message: 'error parsing value as string %!w(<nil>)' },
    ]);
  });

  it('appends elementsYaml after elements (goTemplate)', async () => {
    expect(
      await names({
        goTemplate: true,
        generators: [
          {
            list: {
              elements: [{ cluster: 'one', url: 'https://1' }],
              elementsYaml: '- cluster: two\n  url: https://2\n- cluster: three\n  url: https://3\n',
            },
          },
        ],
        template: template('{{.cluster}}', { destination: { server: '{{.url}}', namespace: 'x' } }),
      }),
    ).toEqual(['one', 'three', 'two']);
  });

  it('generates nothing from an empty list (Argo allows a set with 0 Applications)', async () => {
    expect(await names({ generators: [{ list: { elements: [] } }], template: template() })).toEqual([]);
  });
});

describe('templates', () => {
  it('fasttemplate: dotted names, spaces inside braces, map keys templated, bools untouched', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [{ list: { elements: [{ cluster: 'c1', url: 'https://c1', 'team.name': 'blue' }] } }],
        template: {
          metadata: { name: '{{ cluster }}', annotations: { 'owner/{{team.name}}': 'yes' } },
          spec: {
            ...template().spec,
            syncPolicy: { automated: { prune: true }, syncOptions: ['CreateNamespace=true'] },
          },
        },
      }),
    });
    const app = r.applications[0]!;
    expect(app.metadata.name).toBe('c1');
    expect(app.metadata.annotations).toEqual({ 'owner/blue': 'yes' });
    expect(app.spec.syncPolicy?.automated?.prune).toBe(true);
  });

  it('substitutes JSON-special characters per string (no escaping artefacts)', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [{ list: { elements: [{ cluster: 'q', url: 'https://q', note: 'say "hi"\\ <b>' }] } }],
        template: {
          ...template('{{cluster}}'),
          metadata: { name: '{{cluster}}', annotations: { note: '{{note}}' } },
        },
      }),
    });
    expect(r.applications[0]!.metadata.annotations).toEqual({ note: 'say "hi"\\ <b>' });
  });

  it('goTemplate with sprig, as Argo (GoTemplate.md)', async () => {
    const r = await engine
      .generate({
        applicationSet: appset({
          goTemplate: true,
          goTemplateOptions: ['missingkey=error'],
          generators: [
            { list: { elements: [{ name: 'My_App', url: 'https://x', path: { basename: 'Foo Bar' } }] } },
          ],
          template: {
            metadata: {
              name: '{{ .name | normalize }}',
              labels: { upper: '{{ .name | upper }}', dflt: '{{ default "x" .nothing | quote }}' },
              annotations: { base: '{{ .path.basename | normalize }}', slug: '{{ slugify .path.basename }}' },
            },
            spec: { ...template().spec, destination: { server: '{{ .url }}', namespace: 'n' } },
          },
        }),
      })
      .catch((e: unknown) => e as AppSetError);
    // missingkey=error applies to a missing top-level key even under default.
    expect(r).toBeInstanceOf(AppSetError);
    expect((r as AppSetError).issues[0]!.message).toBe(
      'failed to execute go template {{ default "x" .nothing | quote }}: template: :1:15: executing "" at <.nothing>: map has no entry for key "nothing"',
    );
  });

  it('goTemplate without options: exact sprig output', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        goTemplate: true,
        generators: [
          { list: { elements: [{ name: 'My_App', url: 'https://x', path: { basename: 'Foo Bar' } }] } },
        ],
        template: {
          metadata: {
            name: '{{ .name | normalize }}',
            labels: {
              upper: '{{ .name | upper }}',
              dflt: '{{ default "x" .nothing }}',
              missing: '{{ .nothing }}',
            },
            annotations: {
              base: '{{ .path.basename | normalize }}',
              slug: '{{ slugify .path.basename }}',
              yaml: '{{ toYaml .path }}',
              env: '{{ "HOME" | b64enc }}',
            },
          },
          spec: { ...template().spec, destination: { server: '{{ .url }}', namespace: 'n' } },
        },
      }),
    });
    const app = r.applications[0]!;
    expect(app.metadata.name).toBe('my-app');
    expect(app.metadata.labels).toEqual({ upper: 'MY_APP', dflt: 'x', missing: '<no value>' });
    expect(app.metadata.annotations).toEqual({
      base: 'foo-bar',
      slug: 'foo-bar',
      yaml: 'basename: Foo Bar',
      env: 'SE9NRQ==',
    });
  });

  it('refuses the functions Argo removes (env, expandenv, getHostByName)', async () => {
    const err = await failure({
      goTemplate: true,
      generators: [{ list: { elements: [{ name: 'a' }] } }],
      template: template('{{ env "HOME" }}', { destination: { server: 'https://x', namespace: 'n' } }),
    });
    expect(err.reason).toBe('RenderTemplateParamsError');
    expect(err.issues[0]!.message).toBe(
      'failed to parse template {{ env "HOME" }}: template: :1: function "env" not defined',
    );
  });

  it('templatePatch merges into the rendered Application and never changes the project', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        goTemplate: true,
        generators: [{ list: { elements: [{ name: 'a', auto: true }] } }],
        template: template('{{ .name }}', { destination: { server: 'https://x', namespace: 'n' } }),
        templatePatch: `spec:
  project: stolen
  {{- if .auto }}
  syncPolicy:
    automated:
      prune: true
  {{- end }}
`,
      }),
    });
    expect(r.applications[0]!.spec.project).toBe('default');
    expect(r.applications[0]!.spec.syncPolicy).toEqual({ automated: { prune: true } });
  });

  it('keeps the template finalizers, adds none with preserveResourcesOnDeletion', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        syncPolicy: { preserveResourcesOnDeletion: true },
        generators: [{ list: { elements: [{ cluster: 'a', url: 'https://a' }] } }],
        template: template(),
      }),
    });
    expect(r.applications[0]!.metadata.finalizers).toBeUndefined();
  });
});

describe('errors and bounds', () => {
  it("refuses unknown generator keys and a matrix with three children, with field paths and Argo's text", async () => {
    expect(() =>
      parseApplicationSet(
        appset({
          generators: [
            { lists: { elements: [] } },
            {
              matrix: {
                generators: [
                  { list: { elements: [] } },
                  { list: { elements: [] } },
                  { list: { elements: [] } },
                ],
              },
            },
            { pullRequest: {} },
          ],
          template: template(),
        }),
      ),
    ).toThrow(
      expect.objectContaining({
        issues: expect.arrayContaining([
          {
            path: 'spec.generators[0].lists',
            message: expect.stringContaining('unrecognized generator "lists"'),
          },
          {
            path: 'spec.generators[1].matrix.generators',
            message: 'found more than two generators, Matrix support only two',
          },
          {
            path: 'spec.generators[2].pullRequest',
            message: expect.stringContaining('not supported by Capstan'),
          },
        ]),
      }),
    );
  });

  it("names duplicate, empty and non-DNS names, and a namespace other than the set's", async () => {
    const err = await failure({
      generators: [
        {
          list: {
            elements: [
              { cluster: 'dup', url: 'https://a' },
              { cluster: 'dup', url: 'https://b' },
              { cluster: '', url: 'https://c' },
              { cluster: 'Not_DNS', url: 'https://d' },
            ],
          },
        },
      ],
      template: { ...template('{{cluster}}'), metadata: { name: '{{cluster}}' } },
    });
    expect(err.reason).toBe('ApplicationValidationError');
    expect(err.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'applications["dup"].metadata.name: ApplicationSet guestbook contains applications with duplicate name: dup',
      'applications[""].metadata.name: Required value: name is required',
      expect.stringMatching(
        /^applications\["Not_DNS"\]\.metadata\.name: Invalid value: "Not_DNS": must be a DNS subdomain/,
      ),
    ]);
    const ns = await failure({
      generators: [{ list: { elements: [{ cluster: 'a', url: 'https://a' }] } }],
      template: { ...template('{{cluster}}'), metadata: { name: '{{cluster}}', namespace: 'kube-system' } },
    });
    expect(ns.issues[0]!.path).toBe('applications["a"].metadata.namespace');
  });

  it('gives a generated Application the checks of a directly created one', async () => {
    const err = await failure({
      generators: [{ list: { elements: [{ cluster: 'a', url: 'https://a' }] } }],
      template: {
        metadata: { name: '{{cluster}}' },
        spec: { project: 'default', destination: { server: '{{url}}' } },
      },
    });
    expect(err.issues).toEqual([
      { path: 'applications["a"].spec.source', message: 'source or sources is required' },
    ]);
  });

  it('refuses more Applications than the limit before rendering any', async () => {
    const elements = Array.from({ length: 11 }, (_, i) => ({ cluster: `c${i}`, url: 'https://x' }));
    await expect(
      engine.generate({
        applicationSet: appset({ generators: [{ list: { elements } }], template: template() }),
        limits: { maxApplications: 10 },
      }),
    ).rejects.toThrow('the ApplicationSet generates more than 10 Applications (the limit)');
  });

  it('bounds each rendered string and the render time, and stays usable afterwards', async () => {
    const big = appset({
      goTemplate: true,
      generators: [{ list: { elements: [{ n: 'a' }] } }],
      template: template('{{ repeat 1000 "x" }}', { destination: { server: 'https://x', namespace: 'n' } }),
    });
    await expect(engine.generate({ applicationSet: big, limits: { maxOutputBytes: 100 } })).rejects.toThrow(
      /template output exceeds the size limit/,
    );
    const slow = appset({
      goTemplate: true,
      generators: [{ list: { elements: [{ n: 'a' }] } }],
      template: template('{{ range $i := until 100000000 }}{{ end }}x', {
        destination: { server: 'https://x', namespace: 'n' },
      }),
    });
    await expect(engine.generate({ applicationSet: slow, limits: { timeoutMs: 500 } })).rejects.toThrow(
      'generating the ApplicationSet took longer than 500 ms (the limit)',
    );
    expect(
      await names({
        generators: [{ list: { elements: [{ cluster: 'ok', url: 'https://x' }] } }],
        template: template(),
      }),
    ).toEqual(['ok-guestbook']);
  });
});

describe('matrix and merge', () => {
  it("matrix: the second child uses the first child's params (Generators-Matrix.md)", async () => {
    expect(
      await names({
        generators: [
          {
            matrix: {
              generators: [
                { list: { elements: [{ env: 'dev' }, { env: 'prod' }] } },
                {
                  list: {
                    elements: [
                      { app: '{{env}}-web', url: 'https://x' },
                      { app: '{{env}}-api', url: 'https://x' },
                    ],
                  },
                },
              ],
            },
          },
        ],
        template: template('{{app}}'),
      }),
    ).toEqual(['dev-api', 'dev-web', 'prod-api', 'prod-web']);
  });

  it("matrix (fasttemplate): a key with two different values is Argo's error", async () => {
    const err = await failure({
      generators: [
        {
          matrix: {
            generators: [{ list: { elements: [{ a: '1' }] } }, { list: { elements: [{ a: '2' }] } }],
          },
        },
      ],
      template: template(),
    });
    expect(err.issues[0]!.message).toBe(
      'failed to combine string maps with merging params for the matrix generator: found duplicate key a with different value, a: 1 ,b: 2',
    );
  });

  it('merge: overrides by mergeKeys, keeps base sets without a match (Generators-Merge.md)', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [
          {
            merge: {
              mergeKeys: ['server'],
              generators: [
                {
                  list: {
                    elements: [
                      { server: 'https://a', name: 'a', 'values.env': 'default' },
                      { server: 'https://b', name: 'b', 'values.env': 'default' },
                    ],
                  },
                },
                { list: { elements: [{ server: 'https://b', 'values.env': 'staging' }] } },
              ],
            },
          },
        ],
        template: {
          ...template('{{name}}-{{values.env}}'),
          spec: { ...template().spec, destination: { server: '{{server}}', namespace: 'x' } },
        },
      }),
    });
    expect(r.applications.map((a) => a.metadata.name)).toEqual(['a-default', 'b-staging']);
  });

  it("merge: param sets not unique by mergeKeys are Argo's error", async () => {
    const err = await failure({
      generators: [
        {
          merge: {
            mergeKeys: ['k'],
            generators: [
              { list: { elements: [{ k: '1' }, { k: '1' }] } },
              { list: { elements: [{ k: '1' }] } },
            ],
          },
        },
      ],
      template: template(),
    });
    expect(err.issues[0]!.message).toBe(
      'error getting param sets by merge key: the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique. Duplicate key was {"k":"1"}',
    );
  });

  it("selector post-filters a generator's params; a generator template overrides the set's", async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [
          {
            list: {
              elements: [
                { cluster: 'a', url: 'https://a', env: 'prod' },
                { cluster: 'b', url: 'https://b', env: 'dev' },
              ],
              template: { metadata: { labels: { from: 'generator' } }, spec: { project: 'team' } },
            },
            selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
          },
        ],
        template: template('{{cluster}}'),
      }),
    });
    expect(r.applications.map((a) => [a.metadata.name, a.metadata.labels, a.spec.project])).toEqual([
      ['a', { from: 'generator' }, 'team'],
    ]);
  });
});

describe('clusters generator', () => {
  const clusters: Providers['clusters'] = {
    listClusters: async () => [
      { name: 'staging', server: 'https://1.2.3.4', labels: { env: 'staging' }, annotations: { team: 'x' } },
      { name: 'Prod_EU', server: 'https://5.6.7.8', project: 'p', labels: { env: 'prod' } },
    ],
  };

  it('adds the in-cluster entry first when the selector is empty; labels and normalized names as params', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [{ clusters: { values: { suffix: '{{name}}-x' } } }],
        template: {
          metadata: {
            name: '{{nameNormalized}}',
            labels: { env: '{{metadata.labels.env}}', v: '{{values.suffix}}' },
          },
          spec: { ...template().spec, destination: { server: '{{server}}', namespace: 'x' } },
        },
      }),
      providers: { clusters },
    });
    expect(r.applications.map((a) => [a.metadata.name, a.metadata.labels])).toEqual([
      ['in-cluster', { env: '{{metadata.labels.env}}', v: 'in-cluster-x' }],
      ['prod-eu', { env: 'prod', v: 'Prod_EU-x' }],
      ['staging', { env: 'staging', v: 'staging-x' }],
    ]);
    expect(r.reads.clusters).toBe(true);
  });

  it('a selector excludes the in-cluster entry', async () => {
    expect(
      await names(
        {
          generators: [{ clusters: { selector: { matchLabels: { env: 'prod' } } } }],
          template: template('{{nameNormalized}}', { destination: { server: '{{server}}', namespace: 'x' } }),
        },
        { clusters },
      ),
    ).toEqual(['prod-eu']);
  });

  it('needs the registry: offline it says so with the path', async () => {
    const err = await failure({ generators: [{ clusters: {} }], template: template() });
    expect(err.reason).toBe('ProviderMissing');
    expect(err.issues[0]!.path).toBe('spec.generators[0]');
  });
});

describe('git generators', () => {
  const calls: unknown[] = [];
  const git: Providers['git'] = {
    listDirectories: async (req) => {
      calls.push(req);
      return {
        paths: [
          'apps',
          'apps/guestbook',
          'apps/helm-guestbook',
          'apps/kustomize-guestbook',
          'apps/x/deep',
          'other',
        ],
      };
    },
    listFiles: async (req) => {
      calls.push(req);
      return {
        files: [
          {
            path: 'cluster-config/engineering/prod/config.json',
            content: JSON.stringify({
              aws_account: '123456',
              asset_id: '11223344',
              cluster: {
                owner: 'cluster-admin@company.com',
                name: 'engineering-prod',
                address: 'https://1.2.3.4',
              },
              replicas: 1000000,
              list: ['a', 'b'],
            }),
          },
          {
            path: 'cluster-config/engineering/dev/config.yaml',
            content:
              'aws_account: "123456"\nasset_id: "11223344"\ncluster:\n  owner: cluster-admin@company.com\n  name: engineering-dev\n  address: https://2.4.6.8\n',
          },
        ],
      };
    },
  };

  it('directories: Go path.Match globs, exclude entries win, path params (Generators-Git.md)', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [
          {
            git: {
              repoURL: 'https://github.com/argoproj/argo-cd.git',
              revision: 'HEAD',
              directories: [{ path: 'apps/*' }, { path: 'apps/kustomize-guestbook', exclude: true }],
            },
          },
        ],
        template: {
          metadata: {
            name: '{{path.basename}}',
            labels: { p0: '{{path[0]}}', n: '{{path.basenameNormalized}}' },
          },
          spec: {
            ...template().spec,
            source: { repoURL: 'https://github.com/argoproj/argo-cd.git', path: '{{path}}' },
            destination: { server: 'https://kubernetes.default.svc', namespace: '{{path.basename}}' },
          },
        },
      }),
      providers: { git },
    });
    expect(r.applications.map((a) => [a.metadata.name, a.spec.source?.path, a.metadata.labels])).toEqual([
      ['guestbook', 'apps/guestbook', { p0: 'apps', n: 'guestbook' }],
      ['helm-guestbook', 'apps/helm-guestbook', { p0: 'apps', n: 'helm-guestbook' }],
    ]);
    expect(r.reads.repos).toEqual([{ repoURL: 'https://github.com/argoproj/argo-cd.git', revision: 'HEAD' }]);
  });

  it('files: JSON and YAML flattened as Argo (numbers with Go %v), path params', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        generators: [
          { git: { repoURL: 'https://example.com/r.git', files: [{ path: 'cluster-config/**/config.*' }] } },
        ],
        template: {
          metadata: {
            name: '{{cluster.name}}',
            labels: {
              r: '{{replicas}}',
              l1: '{{list.1}}',
              b: '{{path.basename}}',
              f: '{{path.filename}}',
              s: '{{path[1]}}',
              fn: '{{path.filenameNormalized}}',
            },
          },
          spec: { ...template().spec, destination: { server: '{{cluster.address}}', namespace: 'x' } },
        },
      }),
      providers: { git },
    });
    expect(r.applications.map((a) => [a.metadata.name, a.metadata.labels])).toEqual([
      [
        'engineering-dev',
        {
          r: '{{replicas}}',
          l1: '{{list.1}}',
          b: 'dev',
          f: 'config.yaml',
          s: 'engineering',
          fn: 'config.yaml',
        },
      ],
      [
        'engineering-prod',
        { r: '1e+06', l1: 'b', b: 'prod', f: 'config.json', s: 'engineering', fn: 'config.json' },
      ],
    ]);
  });

  it('files with goTemplate: nested objects and path.segments', async () => {
    const r = await engine.generate({
      applicationSet: appset({
        goTemplate: true,
        generators: [
          { git: { repoURL: 'https://example.com/r.git', files: [{ path: 'cluster-config/**/config.*' }] } },
        ],
        template: {
          metadata: {
            name: '{{ .cluster.name }}',
            labels: { seg: '{{ index .path.segments 2 }}', r: '{{ .replicas | default 0 | int }}' },
          },
          spec: { ...template().spec, destination: { server: '{{ .cluster.address }}', namespace: 'x' } },
        },
      }),
      providers: { git },
    });
    expect(r.applications.map((a) => a.metadata.labels)).toEqual([
      { seg: 'dev', r: '0' },
      { seg: 'prod', r: '1000000' },
    ]);
  });

  it('generatorInputs lists what the pre-generate check must authorise', () => {
    const set = parseApplicationSet(
      appset({
        generators: [
          {
            matrix: {
              generators: [
                { git: { repoURL: 'https://a.git', directories: [{ path: '*' }] } },
                { clusters: {} },
              ],
            },
          },
        ],
        template: template(),
      }),
    );
    expect(generatorInputs(set)).toEqual({
      repos: [
        {
          repoURL: 'https://a.git',
          revision: 'HEAD',
          templated: false,
          path: 'spec.generators[0].matrix.generators[0].git',
        },
      ],
      clusters: ['spec.generators[0].matrix.generators[1].clusters'],
    });
  });
});
