// What peer-argocd drives through both systems, and how it watches them: the git content of N
// Applications × 10 resources, the per-Application tracker of "Synced at revision R with a
// succeeded operation at R", and the CPU and peak RSS of a set of processes read from /proc.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TestRepository } from '@capstan/test/git';

export const RESOURCES = 10;
export const NAMESPACES = 10;
export const appName = (i: number) => `app-${i}`;
export const appPath = (i: number) => `apps/${appName(i)}`;

/** One Application's 10 objects: 4 ConfigMaps, 3 Deployments, 3 Services, one YAML file each. */
export function appFiles(i: number, version: number): Record<string, string> {
  const app = appName(i);
  const files: Record<string, string> = {};
  for (let c = 0; c < 4; c++)
    files[`${appPath(i)}/config-${c}.yaml`] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${app}-config-${c}
data:
  app: ${app}
  version: "${c === 0 ? version : 1}"
  settings.yaml: |
    replicas: 2
    image: registry.example.com/${app}:1.0
    logLevel: info
`;
  for (let d = 0; d < 3; d++) {
    files[`${appPath(i)}/deploy-${d}.yaml`] = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${app}-web-${d}
spec:
  replicas: 1
  selector:
    matchLabels: { app: ${app}-web-${d} }
  template:
    metadata:
      labels: { app: ${app}-web-${d} }
    spec:
      containers:
        - name: web
          image: registry.example.com/${app}:1.0
          ports:
            - containerPort: 8080
`;
    files[`${appPath(i)}/service-${d}.yaml`] = `apiVersion: v1
kind: Service
metadata:
  name: ${app}-web-${d}
spec:
  selector: { app: ${app}-web-${d} }
  ports:
    - port: 80
      targetPort: 8080
`;
  }
  return files;
}

/** The first commit: every Application's directory. */
export async function commitWorkload(repo: TestRepository, apps: number): Promise<string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < apps; i++) Object.assign(files, appFiles(i, 1));
  return repo.commit(files, { message: 'workload' });
}

/** The push: one line (config-0's `version`) changed in each Application's directory, one commit. */
export async function commitChange(repo: TestRepository, apps: number, version: number): Promise<string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < apps; i++) {
    const name = `${appPath(i)}/config-0.yaml`;
    files[name] = appFiles(i, version)[name]!;
  }
  return repo.commit(files, { message: `version ${version}` });
}

/** What a system says about one Application. */
export interface AppState {
  syncStatus?: string;
  revision?: string;
  operationPhase?: string;
  operationRevision?: string;
}

/**
 * Per-Application states as each system reports them, and the first moment each Application was
 * done (Synced at the target revision and its last operation Succeeded at it) since `expect`.
 */
export class Tracker {
  private readonly states = new Map<string, AppState>();
  private target = '';
  private since = 0;
  private doneAt = new Map<string, number>();
  private waiters: (() => void)[] = [];

  constructor(private readonly apps: number) {}

  update(app: string, patch: Partial<AppState>): void {
    const s = { ...this.states.get(app), ...patch };
    this.states.set(app, s);
    if (
      this.target &&
      !this.doneAt.has(app) &&
      s.syncStatus === 'Synced' &&
      s.revision === this.target &&
      s.operationPhase === 'Succeeded' &&
      s.operationRevision === this.target
    ) {
      this.doneAt.set(app, performance.now());
      if (this.doneAt.size === this.apps) for (const w of this.waiters.splice(0)) w();
    }
  }

  /** Starts a phase: from `since` (performance.now()), until every Application is done at `revision`. */
  expect(revision: string, since: number): void {
    this.target = revision;
    this.since = since;
    this.doneAt = new Map();
    for (const [app, s] of this.states) this.update(app, s);
  }

  /** Resolves with each Application's time to done (ms from `since`), or rejects after timeoutMs. */
  async all(timeoutMs: number, describe: () => string): Promise<number[]> {
    if (this.doneAt.size < this.apps) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((r) => this.waiters.push(r)),
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(
              () =>
                reject(
                  new Error(
                    `${this.doneAt.size}/${this.apps} done at ${this.target} after ${timeoutMs} ms\n${describe()}`,
                  ),
                ),
              timeoutMs,
            )),
        ),
      ]).finally(() => clearTimeout(timer));
    }
    return [...this.doneAt.values()].map((t) => t - this.since);
  }

  /** A few Applications that are not done yet, with their states (for error messages). */
  pending(): string {
    return [...this.states]
      .filter(([app]) => !this.doneAt.has(app))
      .slice(0, 5)
      .map(([app, s]) => `${app}: ${JSON.stringify(s)}`)
      .join('\n');
  }
}

const stat = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
};

/**
 * CPU ms of the processes (user + system, with their reaped children such as git: fields 14-17),
 * and the sum of their peak RSS (VmHWM) in MiB. A process that has ended counts its last reading.
 */
export class ProcessMeter {
  private readonly last = new Map<number, { cpuMs: number; hwmMiB: number }>();

  constructor(private readonly pids: () => Map<string, number>) {}

  read(): {
    cpuMs: number;
    peakRssMiB: number;
    byProcess: Record<string, { cpuMs: number; peakRssMiB: number }>;
  } {
    const byProcess: Record<string, { cpuMs: number; peakRssMiB: number }> = {};
    for (const [name, pid] of this.pids()) {
      try {
        const f = stat(pid);
        const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        this.last.set(pid, { cpuMs: ticks * 10, hwmMiB: hwm ? Number(hwm[1]) / 1024 : 0 });
      } catch {
        // Ended: its last reading stands.
      }
      const l = this.last.get(pid) ?? { cpuMs: 0, hwmMiB: 0 };
      byProcess[name] = { cpuMs: l.cpuMs, peakRssMiB: Math.round(l.hwmMiB * 10) / 10 };
    }
    const values = Object.values(byProcess);
    return {
      cpuMs: values.reduce((a, b) => a + b.cpuMs, 0),
      peakRssMiB: Math.round(values.reduce((a, b) => a + b.peakRssMiB, 0) * 10) / 10,
      byProcess,
    };
  }
}

/** What the benchmark needs of each system. */
export interface PeerSystem {
  /** The system's own processes (name → pid). */
  pids(): Map<string, number>;
  /** Creates every Application at once (automated sync), concurrently. */
  createApps(apps: number): Promise<void>;
  /** Tells the system about a push of `after` on main (its webhook). */
  announcePush(push: { before: string; after: string; modified: string[] }): Promise<void>;
  /** The last lines of the system's logs (for error messages). */
  output(): string;
  stop(): Promise<void>;
}

/** POSTs a GitHub push delivery of main (what both systems' webhooks parse), signed with `secret`. */
export async function postGithubPush(
  url: string,
  repoUrl: string,
  push: { before: string; after: string; modified: string[] },
  secret: string,
): Promise<Response> {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    before: push.before,
    after: push.after,
    repository: {
      name: 'workload',
      full_name: 'bench/workload',
      html_url: repoUrl.replace(/\.git$/, ''),
      clone_url: repoUrl,
      default_branch: 'main',
    },
    commits: [{ id: push.after, message: 'change', added: [], removed: [], modified: push.modified }],
  });
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomBytes(16).toString('hex'),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });
}
