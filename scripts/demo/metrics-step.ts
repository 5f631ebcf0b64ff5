// The story's metrics step: the sync service's /metrics (its ops port) after the sync, as Prometheus
// reads it — Argo CD's metric names under capstan_ with Argo's labels (docs/observability.md).
import { detail, done, step } from './progress.js';
import { ports } from './stack.js';

export async function runMetricsStep(application: string): Promise<void> {
  const url = `http://127.0.0.1:${ports.ops.sync}/metrics`;
  step(`the sync in Prometheus metrics (${url})`);
  const succeeded = (l: string) => l.startsWith('capstan_app_sync_total{') && l.includes('phase="Succeeded"');
  let lines: string[] = [];
  // The counter moves as the attempt returns, a moment after the terminal state the CLI saw.
  for (let tries = 0; tries < 20 && !lines.some(succeeded); tries++) {
    if (tries > 0) await new Promise((r) => setTimeout(r, 250));
    const text = await (await fetch(url)).text();
    lines = text
      .split('\n')
      .filter((l) => /^capstan_app_(sync_total|info)\{/.test(l) && l.includes(`name="${application}"`));
  }
  if (!lines.some(succeeded))
    throw new Error(`capstan_app_sync_total{name="${application}",phase="Succeeded"} is not in ${url}`);
  detail(lines.join('\n'));
  done('(Grafana dashboard: deploy/grafana/capstan-dashboard.json)');
}
