// Who may publish and read what on the bus. Every Capstan service has its own NATS user; each may
// publish only the subjects of the aggregates it owns (and the dead letters of its own consumers),
// and may read only through its own durable consumers. Other systems get an `ext-<source>` user that
// may publish only `<ns>.ext.<source>.>` and listen to `<ns>.evt.>`. Deny by default: anything not
// allowed here is refused by the server.
//
// This table is the one place that says it; `@capstan/events` checks in a unit test that every
// catalog subject has exactly one publisher here, and the services' integration tests run against
// a server configured from it (a consumer missing from this table fails them).
import { deadLetterSubject, inboxPrefixOf, streamKinds, streamName, type StreamKind } from './subjects.js';

export type ServiceUser = 'api' | 'sync' | 'repo' | 'appset';
export const serviceUsers: readonly ServiceUser[] = ['api', 'sync', 'repo', 'appset'];

/** Subjects (below the namespace) each service publishes: the aggregates and commands it owns. */
export const publishedBy: Readonly<Record<ServiceUser, readonly string[]>> = {
  // cmd.deadletter.>: an admin's `capstan admin dlq replay`, after the api's RBAC check.
  // ext.git.push (that subject only, never ext.git.>): the api's git webhook announces verified
  // pushes (docs/webhooks.md); it is the one external event a service publishes.
  api: [
    'ext.git.push',
    'evt.project.>',
    'evt.application.>',
    'evt.cluster.>',
    'evt.settings.>',
    'cmd.sync.>',
    'cmd.deadletter.>',
  ],
  sync: ['evt.sync.>'],
  repo: ['evt.repository.>'],
  appset: ['evt.applicationset.>'],
};

/** The durable consumers of each service, with the stream each reads. */
export const consumersOf: Readonly<Record<ServiceUser, readonly { durable: string; stream: StreamKind }[]>> =
  {
    api: [
      { durable: 'api-sync-status', stream: 'evt' },
      { durable: 'api-ext-sync-requests', stream: 'ext' },
      { durable: 'api-dlq-replay', stream: 'cmd' },
    ],
    sync: [
      { durable: 'sync-requests', stream: 'cmd' },
      { durable: 'sync-automated', stream: 'evt' },
      { durable: 'sync-read-model', stream: 'evt' },
      // Applied Argo CD settings (argocd-cm, ...), kept in the sync schema and applied live.
      { durable: 'sync-settings', stream: 'evt' },
      { durable: 'sync-dlq-replay', stream: 'cmd' },
    ],
    repo: [
      { durable: 'repo-git-push', stream: 'ext' },
      // Applied argocd-cm (its kustomize.* keys), kept in the repo schema and applied live.
      { durable: 'repo-settings', stream: 'evt' },
      { durable: 'repo-dlq-replay', stream: 'cmd' },
    ],
    // Reconcile triggers: git pushes (EXT), new revisions of watched sources and cluster registry
    // changes (EVT).
    appset: [
      { durable: 'appset-git-push', stream: 'ext' },
      { durable: 'appset-triggers', stream: 'evt' },
      // Applied argocd-cmd-params-cm (applicationsetcontroller.log.level), kept in the appset schema.
      { durable: 'appset-settings', stream: 'evt' },
      { durable: 'appset-dlq-replay', stream: 'cmd' },
    ],
  };

export interface Permissions {
  publish: string[];
  subscribe: string[];
}

/**
 * `namespace` is the installation's namespace, or `*` for a shared test server where every test has
 * its own namespace (stream names then cannot be pinned either: NATS wildcards are whole tokens).
 */
function streamToken(namespace: string, kind: StreamKind): string {
  return namespace === '*' ? '*' : streamName(namespace, kind);
}

export function servicePermissions(user: ServiceUser, namespace: string): Permissions {
  const publish = publishedBy[user].map((s) => `${namespace}.${s}`);
  // Every service provisions the streams at start-up (idempotently), so whichever starts first works.
  publish.push('$JS.API.INFO');
  for (const kind of streamKinds) {
    const s = streamToken(namespace, kind);
    publish.push(`$JS.API.STREAM.INFO.${s}`, `$JS.API.STREAM.CREATE.${s}`, `$JS.API.STREAM.UPDATE.${s}`);
  }
  for (const { durable, stream } of consumersOf[user]) {
    const s = streamToken(namespace, stream);
    publish.push(
      deadLetterSubject(namespace, durable),
      `$JS.API.CONSUMER.INFO.${s}.${durable}`,
      `$JS.API.CONSUMER.CREATE.${s}.${durable}`,
      `$JS.API.CONSUMER.CREATE.${s}.${durable}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${s}.${durable}`,
      `$JS.API.CONSUMER.MSG.NEXT.${s}.${durable}`,
      `$JS.ACK.${s}.${durable}.>`,
    );
  }
  return { publish: [...new Set(publish)], subscribe: [`${inboxPrefixOf(user)}.>`] };
}

export function extUserOf(source: string): string {
  return `ext-${source}`;
}

/** Another system publishing as `source`: its own ext subjects, and the domain events to listen to. */
export function extPermissions(source: string, namespace: string): Permissions {
  return {
    publish: [`${namespace}.ext.${source}.>`],
    subscribe: [`${namespace}.evt.>`, `${inboxPrefixOf(extUserOf(source))}.>`],
  };
}

/** An operator (or the test suite's cleanup): everything. Never given to a service. */
export const adminPermissions: Permissions = { publish: ['>'], subscribe: ['>'] };
