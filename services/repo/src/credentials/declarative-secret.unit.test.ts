import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { parseRepositorySecret } from './declarative-secret.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const base = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: 'team-a-apps',
    namespace: 'argocd',
    labels: { 'argocd.argoproj.io/secret-type': 'repository' },
  },
};

describe('parseRepositorySecret', () => {
  it("reads Argo CD's shape from stringData and data, stringData winning", () => {
    const parsed = parseRepositorySecret({
      ...base,
      data: { url: b64('https://old.example/x.git'), password: b64('from-data') },
      stringData: {
        url: 'https://git.example.com/team-a/apps.git',
        project: 'team-a',
        username: 'bot',
        insecure: 'true',
      },
    });
    expect(parsed.name).toBe('team-a-apps');
    expect(parsed.input).toMatchObject({
      name: 'team-a-apps',
      url: 'https://git.example.com/team-a/apps.git',
      project: 'team-a',
      type: 'git',
      username: 'bot',
      insecure: true,
      secret: { password: 'from-data' },
    });
  });

  it('refuses other secret types and names the label', () => {
    const other = {
      ...base,
      metadata: { ...base.metadata, labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
      stringData: { url: 'https://h/a.git' },
    };
    expect(() => parseRepositorySecret(other)).toThrow(
      /metadata\.labels\.argocd\.argoproj\.io\/secret-type: must be "repository"/,
    );
  });

  it('reports each bad field by path without quoting secrets', () => {
    const run = (m: unknown) => {
      try {
        parseRepositorySecret(m);
      } catch (err) {
        expect(err).toBeInstanceOf(ValidationError);
        return err as ValidationError;
      }
      throw new Error('accepted');
    };
    expect(run({ ...base, stringData: {} }).message).toMatch(/stringData\.url: is required/);
    expect(run({ ...base, stringData: { url: 'https://h/a.git', type: 'oci' } }).message).toMatch(
      /stringData\.type/,
    );
    expect(run({ ...base, data: { url: '***not-base64***' } }).message).toMatch(/data\.url: must be base64/);
    expect(run({ ...base, stringData: { url: 'https://h/a.git', password: 42 } }).message).toMatch(
      /stringData\.password: must be a string/,
    );
    const leaked = run({ ...base, stringData: { url: 'https://u:canary-pw@h/a.git' } });
    expect(leaked.message).toMatch(/stringData\.url/);
    expect(leaked.message).not.toContain('canary-pw');
    expect(
      run({
        ...base,
        metadata: { ...base.metadata, name: 'Not_Valid' },
        stringData: { url: 'https://h/a.git' },
      }).violations[0]?.field,
    ).toBe('metadata.name');
  });
});
