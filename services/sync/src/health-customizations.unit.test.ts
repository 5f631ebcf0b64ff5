// resource.customizations-file: argocd-cm data keys read at start-up; a bad file stops the start
// naming the file and the key.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadHealthAssessor } from './health-customizations.js';

const file = async (content: string) => {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-health-'));
  const path = join(dir, 'argocd-cm.yaml');
  await writeFile(path, content);
  return path;
};

const certificate = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c' } };

describe('loadHealthAssessor', () => {
  it('without a file: the built-in rules only', async () => {
    const health = await loadHealthAssessor('');
    expect(health.assess(certificate)).toBeUndefined();
    expect(
      health.assess({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', status: { phase: 'Pending' } }),
    ).toEqual({
      status: 'Progressing',
    });
  });

  it('reads data keys, or a whole argocd-cm ConfigMap, and ignores keys that are not health checks', async () => {
    const keys = await file(
      [
        'url: https://argocd.example.com',
        'resource.customizations.health.cert-manager.io_Certificate: |',
        '  return { status = "Degraded", message = "from keys" }',
      ].join('\n'),
    );
    expect((await loadHealthAssessor(keys)).assess(certificate)).toEqual({
      status: 'Degraded',
      message: 'from keys',
    });
    const configMap = await file(
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: { name: argocd-cm, namespace: argocd }',
        'data:',
        '  resource.customizations: |',
        '    cert-manager.io/*:',
        '      health.lua: |',
        '        return { status = "Healthy", message = "from the block" }',
      ].join('\n'),
    );
    expect((await loadHealthAssessor(configMap)).assess(certificate)).toEqual({
      status: 'Healthy',
      message: 'from the block',
    });
  });

  it('fails with the file and the key at fault', async () => {
    const badBool = await file('resource.customizations.useOpenLibs.apps_Deployment: perhaps\n');
    await expect(loadHealthAssessor(badBool)).rejects.toThrow(
      `${badBool}: resource.customizations.useOpenLibs.apps_Deployment: strconv.ParseBool: parsing "perhaps": invalid syntax`,
    );
    const badLua = await file('resource.customizations.health.apps_Deployment: "return {"\n');
    await expect(loadHealthAssessor(badLua)).rejects.toThrow(
      new RegExp(`^${badLua}: health check resource.customizations.health.apps_Deployment: `),
    );
    const badYaml = await file('a: [\n');
    await expect(loadHealthAssessor(badYaml)).rejects.toThrow(new RegExp(`^${badYaml}: not valid YAML`));
    await expect(loadHealthAssessor('/nonexistent/argocd-cm.yaml')).rejects.toThrow(
      /^resource.customizations-file \/nonexistent\/argocd-cm.yaml: cannot be read: ENOENT/,
    );
  });
});
