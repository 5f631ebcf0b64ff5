import { describe, expect, it } from 'vitest';
import { systemIgnoreDifferencesFromArgoCdCm } from './system-ignore.js';

describe("argocd-cm's system-level ignoreDifferences", () => {
  it('reads the per-kind keys, `all` and the legacy block as Argo CD does', () => {
    expect(
      systemIgnoreDifferencesFromArgoCdCm({
        'resource.customizations.ignoreDifferences.apps_Deployment': 'jsonPointers:\n- /spec/replicas\n',
        'resource.customizations.ignoreDifferences.all':
          'managedFieldsManagers:\n- kube-controller-manager\n',
        'resource.customizations.ignoreDifferences.ConfigMap': 'jqPathExpressions:\n- .data.stamp\n',
        'resource.customizations':
          'admissionregistration.k8s.io/MutatingWebhookConfiguration:\n  ignoreDifferences: |\n    jsonPointers:\n    - /webhooks/0/clientConfig/caBundle\n',
        'resource.customizations.health.example.com_Widget': 'hs = {}',
      }),
    ).toEqual([
      {
        group: 'admissionregistration.k8s.io',
        kind: 'MutatingWebhookConfiguration',
        jsonPointers: ['/webhooks/0/clientConfig/caBundle'],
      },
      { group: '', kind: 'ConfigMap', jqPathExpressions: ['.data.stamp'] },
      { group: '*', kind: '*', managedFieldsManagers: ['kube-controller-manager'] },
      { group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] },
    ]);
  });

  it('names the key of a bad entry', () => {
    expect(() =>
      systemIgnoreDifferencesFromArgoCdCm({
        'resource.customizations.ignoreDifferences.apps_Deployment': 'jsonPointers: /x',
      }),
    ).toThrow(
      'resource.customizations.ignoreDifferences.apps_Deployment: jsonPointers: must be a list of strings',
    );
  });
});
