// Fixtures and small helpers shared by the api's integration tests.
import type { ServiceError } from '@grpc/grpc-js';
import type { Harness } from './harness.js';

export const TENANT_POLICY = `
p, role:project-editor, projects, update, *, allow
p, role:project-editor, projects, get, *, allow
g, editor, role:project-editor
`;

export const teamA = {
  metadata: { name: 'team-a' },
  spec: {
    description: 'team a',
    sourceRepos: ['https://git.example.com/team-a/*'],
    destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'team-a-*' }],
    destinationServiceAccounts: [
      {
        server: 'https://kubernetes.default.svc',
        namespace: 'team-a-prod',
        defaultServiceAccount: 'deployer',
      },
    ],
    roles: [
      {
        name: 'developer',
        policies: ['p, proj:team-a:developer, applications, *, team-a/*, allow'],
        groups: ['tenant-a'],
      },
    ],
  },
};

export const guestbook = (project: string, name = 'guestbook') => ({
  metadata: { name },
  spec: {
    project,
    source: { repoURL: 'https://git.example.com/team-a/apps.git', path: 'guestbook', targetRevision: 'HEAD' },
    destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-prod' },
  },
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- HTTP response bodies of many shapes
export type JsonBody = any;

export async function grpcError(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected the call to fail');
}

/** A JSON call to the api's HTTP face. */
export function httpClient(h: Harness) {
  return async (
    method: string,
    path: string,
    token?: string,
    body?: unknown,
  ): Promise<{ status: number; body: JsonBody }> => {
    const res = await fetch(`${h.httpUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
}
