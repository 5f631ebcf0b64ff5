// Fixed ApplicationSet and verdict values for the output tests: what the api returns, in the
// contract's shapes (libs/proto applicationset.proto).
import { apiv1 } from '@capstan/proto';

export const guestbookSet = apiv1.ApplicationSet.fromJSON({
  metadata: { name: 'guestbook', namespace: 'argocd', labels: { team: 'a' }, resourceVersion: 3 },
  spec: {
    generators: [{ list: { elements: [{ cluster: 'dev' }, { cluster: 'prod' }] } }],
    syncPolicy: { applicationsSync: 'create-update', preserveResourcesOnDeletion: true },
    template: {
      metadata: { name: '{{cluster}}-guestbook' },
      spec: {
        project: 'team-a',
        source: {
          repoURL: 'https://git.example.com/team-a/apps.git',
          targetRevision: 'HEAD',
          path: 'guestbook',
        },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-{{cluster}}' },
        syncPolicy: { automated: { prune: true } },
      },
    },
  },
  status: {
    conditions: [
      {
        type: 'ResourcesUpToDate',
        status: 'True',
        message: 'All applications have been generated successfully',
        reason: 'ApplicationSetUpToDate',
        lastTransitionTime: '2026-11-25T04:00:00Z',
      },
      {
        type: 'ErrorOccurred',
        status: 'False',
        message: 'Successfully generated parameters for all Applications',
        reason: 'ApplicationSetUpToDate',
        lastTransitionTime: '2026-11-25T04:00:00Z',
      },
    ],
  },
});

/** A set with several sources, no project (Argo's default), a destination by name and no status. */
export const multiSourceSet = apiv1.ApplicationSet.fromJSON({
  metadata: { name: 'addons' },
  spec: {
    generators: [{ clusters: {} }],
    template: {
      metadata: { name: '{{name}}-addons' },
      spec: {
        sources: [
          { repoURL: 'https://charts.example.com', chart: 'addons', targetRevision: '1.2.3' },
          { repoURL: 'https://git.example.com/values.git', targetRevision: 'main', ref: 'values' },
        ],
        destination: { name: '{{name}}', namespace: 'addons' },
      },
    },
  },
});

const app = (name: string, namespace: string) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name, namespace: 'argocd' },
  spec: {
    project: 'team-a',
    source: { repoURL: 'https://git.example.com/team-a/apps.git', targetRevision: 'HEAD', path: 'guestbook' },
    destination: { server: 'https://kubernetes.default.svc', namespace },
  },
});

export const generatedApps = [app('dev-guestbook', 'team-a-dev'), app('prod-guestbook', 'team-a-prod')];

export const verdicts: apiv1.GeneratedApplicationVerdict[] = [
  {
    name: 'dev-guestbook',
    namespace: 'argocd',
    project: 'team-a',
    action: 'create',
    allowed: true,
    reason: '',
  },
  {
    name: 'prod-guestbook',
    namespace: 'argocd',
    project: 'team-a',
    action: 'update',
    allowed: false,
    reason: 'project team-a: destination https://kubernetes.default.svc,team-a-prod is not permitted',
  },
  {
    name: 'old-guestbook',
    namespace: 'argocd',
    project: 'team-a',
    action: 'delete',
    allowed: true,
    reason: 'p, role:team-a-dev, applications, delete, team-a/*, allow',
  },
];
