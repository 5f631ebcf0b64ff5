// Story (issue 16, observability): one `capstan app sync` is one trace across the processes that do
// the work. Every service is its own process exporting OTLP/HTTP to a receiver in the test: the api's
// operation span, the sync service's consumer and attempt (the request crosses the bus with its
// traceparent), the repo service's manifest generation (internal gRPC with traceparent metadata)
// and the sync's requests to the real kube-apiserver, written as the tenant's ServiceAccount, all in
// one trace and with one correlation id.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan } from './api-harness.js';
import { addCluster, loginAdmin } from './cli-setup.js';
import { eventually, ok } from './appset-story-fixtures.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

interface Span {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, string>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number };
interface OtlpBody {
  resourceSpans: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans: {
      spans: (Omit<Span, 'service' | 'attributes'> & { attributes?: { key: string; value: OtlpValue }[] })[];
    }[];
  }[];
}

const text = (v: OtlpValue | undefined) =>
  v?.stringValue ?? (v?.intValue !== undefined ? String(v.intValue) : '');

/** An OTLP/HTTP JSON receiver (what a collector's otlphttp receiver accepts), keeping each span's service. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: Span[] }> {
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpBody;
        for (const r of body.resourceSpans) {
          const service = text(r.resource?.attributes?.find((a) => a.key === 'service.name')?.value);
          for (const s of r.scopeSpans)
            for (const span of s.spans)
              spans.push({
                ...span,
                service,
                attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, text(a.value)])),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

const NS = 'traced';

describe('trace story: one sync, one trace across api, sync, repo and the Kubernetes API', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let repo: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let plane: ControlPlane;
  let config: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const as = (args: string[], input?: string) => capstan(config, ['--context', 'admin', ...args], input);

  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await startCluster({ name: 'trace-story', log: () => {} });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: NS,
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
      ],
    });
    git = await startGitServer();
    repo = await git.createRepository('shop/apps.git');
    await repo.commit({
      'web/config.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: traced\n',
    });
    db = await createTestDatabase('capstan_trace_story');
    bus = await createTestBus('tracestory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-trace-story-'));
    config = path.join(dir, 'contexts');
    plane = await startControlPlane({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    await loginAdmin(config, plane.api);
    await addCluster(config, dir, cluster, 'story');
    ok(
      await as([
        'proj',
        'create',
        'shop',
        '--src',
        `${git.baseUrl}/shop/*`,
        '--dest',
        `${cluster.server},${NS}`,
        '--dest-service-account',
        `${cluster.server},${NS},deployer`,
      ]),
      'proj create',
    );
    ok(
      await as([
        'app',
        'create',
        'web',
        '--project',
        'shop',
        '--repo',
        repo.url,
        '--path',
        'web',
        '--revision',
        'main',
        '--dest-server',
        cluster.server,
        '--dest-namespace',
        NS,
      ]),
      'app create',
    );
  }, 300_000);

  afterAll(async () => {
    await plane?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    receiver?.server.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 180_000);

  it('follows `capstan app sync` from the api through the bus, the repo service and the sync to the Kubernetes API', async () => {
    const r = await as(['app', 'sync', 'web', '--timeout', '120', '-o', 'json']);
    ok(r, `app sync: ${plane.output()}`);
    expect(JSON.parse(r.stdout)).toMatchObject({
      phase: 'Succeeded',
      identity: `system:serviceaccount:${NS}:deployer`,
    });
    // The sync's write to the cluster, and the api operation that started its trace. Spans are
    // exported as they end, parents after children: wait for the attempt's span, which ends last.
    const find = (spans: Span[]) => ({
      api: spans.find((s) => s.service === 'capstan-api' && s.name.startsWith('api/')),
      consume: spans.find((s) => s.name === 'consume io.capstan.cmd.sync.request.v1'),
      attempt: spans.find((s) => s.name === 'sync argocd/web'),
      generate: spans.find((s) => s.service === 'capstan-repo'),
      patch: spans.find((s) => s.name === 'k8s Patch ConfigMap'),
    });
    let seen = '';
    const trace = await eventually(
      'the sync trace with the api, repo and Kubernetes spans',
      async () => {
        const patch = receiver.spans.find(
          (s) => s.service === 'capstan-sync' && s.name === 'k8s Patch ConfigMap',
        );
        if (!patch) return undefined;
        const spans = receiver.spans.filter((s) => s.traceId === patch.traceId);
        seen = spans.map((s) => `${s.service}: ${s.name}`).join('\n');
        return Object.values(find(spans)).every(Boolean) ? spans : undefined;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the trace so far:\n${seen}`);
    });
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const names = trace.map((s) => `${s.service}: ${s.name}`).join('\n');
    const { api, consume, attempt, generate, patch } = find(trace);
    expect(api, names).toBeDefined();
    expect(consume, names).toBeDefined();
    expect(attempt, names).toBeDefined();
    expect(generate, names).toBeDefined();
    // The consumer continues the api's operation (through the bus), the attempt the consumer (through
    // the queue); the manifest generation and the cluster write descend from the attempt.
    const descends = (span: Span, ancestor: Span) => {
      for (let p = span.parentSpanId; p; p = byId.get(p)?.parentSpanId)
        if (p === ancestor.spanId) return true;
      return false;
    };
    expect(descends(consume!, api!), names).toBe(true);
    expect(descends(attempt!, consume!), names).toBe(true);
    expect(descends(generate!, attempt!), names).toBe(true);
    expect(descends(patch!, attempt!), names).toBe(true);
    expect(patch!.attributes['server.address']).toBe(cluster.server);
    expect(patch!.attributes['k8s.namespace']).toBe(NS);
    // One correlation id from the request's consumer to the attempt.
    const correlation = consume!.attributes['capstan.correlation_id'];
    expect(correlation).toBeTruthy();
    expect(attempt!.attributes['capstan.correlation_id']).toBe(correlation);
    // No span carries a credential: the cluster's bearer token appears in no attribute.
    expect(JSON.stringify(receiver.spans)).not.toContain(cluster.controlPlaneToken);
  }, 240_000);
});
