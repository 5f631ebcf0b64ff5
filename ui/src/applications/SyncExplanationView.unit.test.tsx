import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import { SyncExplanationView } from './SyncExplanationView';

describe('the Identity panel: who the next sync will write as', () => {
  it('names the ServiceAccount, the chain and the rule that matched; a withheld rule says why', () => {
    render(
      <SyncExplanationView
        e={{
          allowed: true,
          reason: 'team-a destinationServiceAccounts[0] matched',
          impersonation: true,
          identity: 'service-account',
          username: 'system:serviceaccount:team-a-prod:deployer',
          project: 'team-a',
          projectChain: ['team-a', 'platform'],
          destination: { server: 'https://k8s', namespace: 'team-a-prod' },
          checks: [{ check: 'destination', allowed: true, reason: 'ok' }],
          rules: [
            {
              project: 'team-a',
              index: 0,
              server: 'https://k8s',
              namespace: 'team-a-*',
              defaultServiceAccount: 'deployer',
              serverMatched: true,
              namespaceMatched: true,
              firstMatch: true,
            },
            { project: 'platform', index: 0, withheld: true, serverMatched: true, namespaceMatched: true },
          ],
        }}
      />,
    );
    expect(screen.getByText('system:serviceaccount:team-a-prod:deployer')).toBeTruthy();
    expect(screen.getByText('team-a → platform')).toBeTruthy();
    const rules = screen.getByRole('table', { name: /rules of the chain/ });
    expect(within(rules).getByText('✔ first match')).toBeTruthy();
    expect(within(rules).getByText('withheld: you may not get project platform')).toBeTruthy();
    expect(screen.queryByRole('list', { name: 'what denies' })).toBeNull();
  });

  it('shows a refusal with the check and the project that denies', () => {
    render(
      <SyncExplanationView
        e={{
          allowed: false,
          reason: 'destination kube-system is not permitted by project team-a',
          project: 'team-a',
          projectChain: ['team-a'],
          checks: [
            { check: 'project-chain', allowed: true, reason: 'ok' },
            {
              check: 'destination',
              allowed: false,
              reason: 'destination kube-system is not permitted by project team-a',
              project: 'team-a',
            },
          ],
        }}
      />,
    );
    expect(screen.getByText(/Would be refused/)).toBeTruthy();
    const denies = screen.getByRole('list', { name: 'what denies' });
    expect(denies.textContent).toContain('destination (project team-a)');
  });
});
