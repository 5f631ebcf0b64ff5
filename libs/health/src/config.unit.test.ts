// argocd-cm keys → health customizations, as util/settings GetResourceOverrides reads them
// (docs/operator-manual/health.md "Way 1"; argocd-cm.yaml resource.customizations).
import { describe, expect, it } from 'vitest';
import { HealthConfigError, healthCustomizationsFromArgoCdCm } from './index.js';

describe('healthCustomizationsFromArgoCdCm', () => {
  it('reads split keys: <group>_<kind>, a core kind alone, useOpenLibs, and ignores other keys', () => {
    expect(
      healthCustomizationsFromArgoCdCm({
        'resource.customizations.health.cert-manager.io_Certificate': 'return {status="Healthy"}',
        'resource.customizations.useOpenLibs.cert-manager.io_Certificate': 'true',
        'resource.customizations.health.PersistentVolumeClaim': 'return nil',
        'resource.customizations.ignoreDifferences.apps_Deployment': 'jsonPointers: [/spec/replicas]',
        url: 'https://argocd.example.com',
      }),
    ).toEqual([
      {
        group: 'cert-manager.io',
        kind: 'Certificate',
        lua: 'return {status="Healthy"}',
        useOpenLibs: true,
        source: 'resource.customizations.health.cert-manager.io_Certificate',
      },
      {
        group: '',
        kind: 'PersistentVolumeClaim',
        lua: 'return nil',
        useOpenLibs: false,
        source: 'resource.customizations.health.PersistentVolumeClaim',
      },
    ]);
  });

  it('reads the resource.customizations block with wildcards; split keys override it', () => {
    const block = `
"*.aws.crossplane.io/*":
  health.lua: return {status="Healthy"}
  health.lua.useOpenLibs: true
apps/Deployment:
  health.lua: block
  ignoreDifferences: |
    jsonPointers: [/spec/replicas]
`;
    const out = healthCustomizationsFromArgoCdCm({
      'resource.customizations': block,
      'resource.customizations.health.apps_Deployment': 'split',
      'resource.customizations.health.all': 'everything',
    });
    expect(out.map((c) => [c.group, c.kind, c.lua, c.useOpenLibs])).toEqual([
      ['*.aws.crossplane.io', '*', 'return {status="Healthy"}', true],
      ['apps', 'Deployment', 'split', false],
      ['*', '*', 'everything', false],
    ]);
  });

  it('names the key at fault', () => {
    expect(() =>
      healthCustomizationsFromArgoCdCm({ 'resource.customizations.useOpenLibs.apps_Deployment': 'maybe' }),
    ).toThrow(
      new HealthConfigError(
        'resource.customizations.useOpenLibs.apps_Deployment',
        'strconv.ParseBool: parsing "maybe": invalid syntax',
      ),
    );
    expect(() => healthCustomizationsFromArgoCdCm({ 'resource.customizations.health.a_b_c': 'x' })).toThrow(
      /^resource.customizations.health.a_b_c: group kind should be in format/,
    );
    expect(() => healthCustomizationsFromArgoCdCm({ 'resource.customizations': 'a: [' })).toThrow(
      /^resource.customizations: not valid YAML/,
    );
    expect(() =>
      healthCustomizationsFromArgoCdCm({ 'resource.customizations': 'apps/Deployment:\n  health.lua: 3\n' }),
    ).toThrow(/^resource.customizations: apps\/Deployment: health.lua: must be a string/);
  });
});
