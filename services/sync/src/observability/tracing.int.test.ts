// Traces across the bus, the sync service's queue and the Kubernetes API: a sync requested inside a
// span (as the api's operation span) is consumed, queued, claimed and applied against a real
// kube-apiserver, and every span of that work reaches an OTLP/HTTP receiver in the same trace, with
// the request's correlation id.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTraceparent, inSpan } from '@capstan/service';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { startSyncHarness, waitUntil, type SyncHarness } from '../test-support/harness.js';
import { application, cm, rendered, teamAProject } from '../test-support/fixtures.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

/** An OTLP/HTTP JSON receiver (what a collector's otlphttp receiver accepts): keeps every span. */
function startReceiver(): Promise<{
  server: Server;
  url: string;
  spans: OtlpSpan[];
  contentTypes: Set<string>;
}> {
  const spans: OtlpSpan[] = [];
  const contentTypes = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        contentTypes,
      }),
    ),
  );
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? String(v.intValue) : undefined);
};

let a: KubeCluster;
let h: SyncHarness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const app = { namespace: 'argocd', name: 'traced' };

beforeAll(async () => {
  receiver = await startReceiver();
  a = await startCluster({ name: 'sync-tracing', log: () => {} });
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a',
    serviceAccounts: ['deployer'],
    rules: [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
      },
    ],
  });
  h = await startSyncHarness([a], {
    impersonation: true,
    manifests: rendered,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  await h.registerCluster(a, 'traced-cluster');
  await h.putProject(teamAProject(a));
  await h.putApplication(application(app.name, 'team-a', { server: a.server, namespace: 'team-a' }));
}, 240_000);

afterAll(async () => {
  await h?.stop();
  await a?.stop();
  receiver?.server.close();
});

describe('traces', () => {
  it('carry one trace from the requesting span through the bus and the queue to the Kubernetes API', async () => {
    let traceparent: string | undefined;
    let operationId = '';
    await inSpan('test: api operation', {}, async () => {
      traceparent = currentTraceparent();
      operationId = await h.requestSync(app, { objects: [cm('traced-one')] });
    });
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const traceId = traceparent!.split('-')[1]!;
    expect(await h.waitForTerminal(operationId)).toEqual({ status: 'succeeded', reason: 'synced' });
    const [request] = (await h.eventsOf(operationId)).filter((e) => e.type === 'io.capstan.sync.started.v1');
    expect(request).toBeDefined();
    const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
    await waitUntil(async () => inTrace().some((s) => s.name === 'k8s Patch ConfigMap'), 20_000);
    const spans = inTrace();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const consume = spans.find((s) => s.name === 'consume io.capstan.cmd.sync.request.v1');
    const sync = spans.find((s) => s.name === `sync ${app.namespace}/${app.name}`);
    const patch = spans.find((s) => s.name === 'k8s Patch ConfigMap');
    expect(consume, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(sync).toBeDefined();
    expect(patch).toBeDefined();
    // The consumer continues the requesting span; the attempt continues the consumer (through the
    // queue's row); the cluster requests are the attempt's children.
    expect(consume!.parentSpanId).toBe(traceparent!.split('-')[2]);
    expect(sync!.parentSpanId).toBe(consume!.spanId);
    expect(byId.get(patch!.parentSpanId!)).toBe(sync);
    expect(attr(patch!, 'server.address')).toBe(a.server);
    expect(attr(patch!, 'k8s.namespace')).toBe('team-a');
    // One correlation id across the request's consumer and the attempt.
    const correlation = attr(consume!, 'capstan.correlation_id');
    expect(correlation).toBeTruthy();
    expect(attr(sync!, 'capstan.correlation_id')).toBe(correlation);
    expect(attr(sync!, 'capstan.operation_id')).toBe(operationId);
    expect([...receiver.contentTypes]).toEqual(['application/json']);
  });

  it('puts the trace on the events the sync publishes', async () => {
    const operationId = await inSpan('test: api operation', {}, () =>
      h.requestSync(app, { objects: [cm('traced-one')] }),
    );
    expect(await h.waitForTerminal(operationId)).toMatchObject({ status: 'succeeded' });
    const { rows } = await import('kysely').then(({ sql }) =>
      sql<{ envelope: { traceparent?: string; type: string } }>`
        select envelope from sync.events where stream_id = ${`sync-operations/${operationId}`} order by version`.execute(
        h.db,
      ),
    );
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows)
      expect(r.envelope.traceparent, r.envelope.type).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});
