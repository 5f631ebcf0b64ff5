// An Application source's tool options (Argo CD's spec.source.helm / .kustomize / .directory) as
// the repo service's GenerateManifests message carries them, with Argo CD's default for Helm's
// namespace applied: the destination's unless the source names one (the release name's default,
// the Application's name, is applied by the repo service, which knows the source is a chart).
// The repo service validates the options again before rendering.
import type { repov1 } from '@capstan/proto';
import type { Application, ApplicationSource, HelmSource } from '@capstan/policy';

type Message = Pick<repov1.ManifestSource, 'helm' | 'kustomize' | 'directory'>;

function helmMessage(app: Application, src: ApplicationSource): repov1.HelmSource {
  const h: HelmSource = src.helm ?? {};
  return {
    releaseName: h.releaseName ?? '',
    namespace: h.namespace || app.spec.destination.namespace || '',
    valueFiles: h.valueFiles ?? [],
    values: h.values ?? '',
    valuesObjectJson: h.valuesObject !== undefined ? JSON.stringify(h.valuesObject) : '',
    parameters: (h.parameters ?? []).map((p) => ({
      name: p.name,
      value: p.value ?? '',
      forceString: p.forceString ?? false,
    })),
    fileParameters: (h.fileParameters ?? []).map((p) => ({ name: p.name, path: p.path })),
    skipCrds: h.skipCrds ?? false,
    ignoreMissingValueFiles: h.ignoreMissingValueFiles ?? false,
    passCredentials: h.passCredentials ?? false,
    version: h.version ?? '',
    kubeVersion: h.kubeVersion ?? '',
    apiVersions: h.apiVersions ?? [],
    skipTests: h.skipTests ?? false,
    skipSchemaValidation: h.skipSchemaValidation ?? false,
  };
}

function kustomizeMessage(src: ApplicationSource): repov1.KustomizeSource | undefined {
  const k = src.kustomize;
  if (!k) return undefined;
  return {
    namePrefix: k.namePrefix ?? '',
    nameSuffix: k.nameSuffix ?? '',
    images: k.images ?? [],
    commonLabels: k.commonLabels ?? {},
    commonAnnotations: k.commonAnnotations ?? {},
    forceCommonLabels: k.forceCommonLabels ?? false,
    forceCommonAnnotations: k.forceCommonAnnotations ?? false,
    labelWithoutSelector: k.labelWithoutSelector ?? false,
    labelIncludeTemplates: k.labelIncludeTemplates ?? false,
    namespace: k.namespace ?? '',
    replicas: (k.replicas ?? []).map((r) => ({ name: r.name, count: Number(r.count) })),
    patches: (k.patches ?? []).map((p) => ({
      path: p.path ?? '',
      patch: p.patch ?? '',
      target: p.target
        ? {
            group: p.target.group ?? '',
            version: p.target.version ?? '',
            kind: p.target.kind ?? '',
            name: p.target.name ?? '',
            namespace: p.target.namespace ?? '',
            labelSelector: p.target.labelSelector ?? '',
            annotationSelector: p.target.annotationSelector ?? '',
          }
        : undefined,
      options: p.options ?? {},
    })),
    components: k.components ?? [],
    ignoreMissingComponents: k.ignoreMissingComponents ?? false,
    version: k.version ?? '',
    kubeVersion: k.kubeVersion ?? '',
    apiVersions: k.apiVersions ?? [],
  };
}

function directoryMessage(src: ApplicationSource): repov1.DirectorySource | undefined {
  const d = src.directory;
  if (!d) return undefined;
  const var_ = (v: { name: string; value?: string; code?: boolean }) => ({
    name: v.name,
    value: v.value ?? '',
    code: v.code ?? false,
  });
  return {
    recurse: d.recurse ?? false,
    include: d.include ?? '',
    exclude: d.exclude ?? '',
    jsonnet: d.jsonnet
      ? {
          extVars: (d.jsonnet.extVars ?? []).map(var_),
          tlas: (d.jsonnet.tlas ?? []).map(var_),
          libs: d.jsonnet.libs ?? [],
        }
      : undefined,
  };
}

/** The options part of the GenerateManifests source for one of the Application's sources. */
export function sourceOptionsMessage(app: Application, src: ApplicationSource): Message {
  const kustomize = kustomizeMessage(src);
  const directory = directoryMessage(src);
  return {
    // Always: a chart without a helm block still gets the destination namespace.
    helm: helmMessage(app, src),
    ...(kustomize ? { kustomize } : {}),
    ...(directory ? { directory } : {}),
  };
}
