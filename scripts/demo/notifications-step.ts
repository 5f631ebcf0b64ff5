// The story's notifications step (issue 16), inside the Helm chapter: the operator applies Argo CD
// Notifications' argocd-notifications-cm with `capstan apply -f` (an on-sync-succeeded trigger, a
// template, a webhook service to a receiver this process listens with on 127.0.0.1), the banner
// Application subscribes with Argo's annotation (banner-app.yaml), and after its sync the receiver
// shows each delivery and the audit trail records it. The receiver closes with the chapter: a
// delivery after that fails and is retried, each attempt audited (docs/notifications.md).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { capstan } from './capstan-cli.js';
import { detail, done, step } from './progress.js';
import { paths } from './stack.js';

export interface Receiver {
  url: string;
  received: { path: string; body: string }[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ path: `${req.method ?? ''} ${req.url ?? ''}`, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const config = (url: string) => `apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-notifications-cm, namespace: argocd }
data:
  trigger.on-sync-succeeded: |
    - description: Application syncing has succeeded
      send: [app-sync-succeeded]
      when: app.status.operationState.phase in ['Succeeded']
  template.app-sync-succeeded: |
    message: "Application {{.app.metadata.name}} has been successfully synced."
    webhook:
      deploys:
        method: POST
        path: /deployments/{{.app.metadata.name}}
        body: |
          {"app": {{ .app.metadata.name | quote }}, "revisions": {{ .app.status.operationState.syncResult.revisions | toJson }}}
  service.webhook.deploys: |
    url: ${url}
`;

/** Starts the receiver and applies the notifications configuration that sends to it. */
export async function configureNotifications(): Promise<Receiver> {
  step("notifications: argocd-notifications-cm with a webhook service, as Argo CD's (`capstan apply -f`)");
  const receiver = await startReceiver();
  const file = path.join(paths.run, 'argocd-notifications-cm.yaml');
  await writeFile(file, config(receiver.url));
  await capstan(['apply', '-f', file]);
  done(`(receiver on ${receiver.url}; ${path.basename(file)} under .capstan/run/)`);
  return receiver;
}

/** Waits for the `nth` delivery (from 1) of `app`'s syncs and shows it; the first also shows its audit row. */
export async function showDelivery(receiver: Receiver, app: string, nth: number): Promise<void> {
  step(`the on-sync-succeeded notification of ${app}, as the receiver got it`);
  const started = Date.now();
  const mine = () => receiver.received.filter((r) => r.path === `POST /deployments/${app}`);
  while (mine().length < nth) {
    if (Date.now() - started > 60_000) throw new Error(`no notification ${nth} for ${app} within 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const got = mine()[nth - 1]!;
  detail(`${got.path} ${got.body.trim()}`);
  if (nth === 1) await capstan(['audit', 'query', 'notifications', '--limit', '1']);
  done();
}
