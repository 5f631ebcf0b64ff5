// A list of one collection as plain JSON, page by page, through the informer's KubeConfig (so as its
// identity). client-node's typed list would turn timestamps into Dates while watch events keep them
// as strings; the comparison needs one shape, the API server's.
import { request } from 'node:https';
import { request as httpRequest, type RequestOptions } from 'node:http';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

const PAGE = 500;

/** An API server refusal of a list: `code` is the HTTP status, `verb` what was refused. */
export class ListError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly verb = 'list',
  ) {
    super(message);
  }
}

async function getJson(kc: KubeConfig, url: URL, timeoutMs: number): Promise<unknown> {
  const options: RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const send = url.protocol === 'https:' ? request : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { ...options, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          try {
            resolve(JSON.parse(text));
          } catch (err) {
            reject(err as Error);
          }
          return;
        }
        let message = text.slice(0, 500);
        try {
          message = (JSON.parse(text) as { message?: string }).message ?? message;
        } catch {
          // not a Status object
        }
        reject(new ListError(message, status));
      });
    });
    req.on('timeout', () =>
      req.destroy(new Error(`list ${url.pathname}: no answer within ${timeoutMs} ms (timeout)`)),
    );
    req.on('error', reject);
    req.end();
  });
}

export async function listCollection(
  kc: KubeConfig,
  path: string,
  typeMeta: { apiVersion: string; kind: string },
  timeoutMs: number,
): Promise<KubernetesListObject<KubernetesObject>> {
  const server = kc.getCurrentCluster()?.server ?? '';
  const items: KubernetesObject[] = [];
  let resourceVersion = '';
  let next: string | undefined;
  do {
    const url = new URL(server + path);
    url.searchParams.set('limit', String(PAGE));
    if (next) url.searchParams.set('continue', next);
    const page = (await getJson(kc, url, timeoutMs)) as {
      items?: KubernetesObject[];
      metadata?: { resourceVersion?: string; continue?: string };
    };
    // Items of a list carry no apiVersion and kind; watch events do.
    for (const item of page.items ?? []) items.push({ ...typeMeta, ...item });
    resourceVersion ||= page.metadata?.resourceVersion ?? '';
    next = page.metadata?.continue || undefined;
  } while (next);
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion } };
}
