import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import { FieldDiffView } from './FieldDiffView';

describe('field diff view', () => {
  it('shows each differing field as path, desired, live', () => {
    render(
      <FieldDiffView
        targetState='{"data":{"greeting":"hello"},"spec":{"replicas":2}}'
        liveState='{"data":{"greeting":"bonjour"},"status":{"ready":1}}'
      />,
    );
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.textContent)).toEqual([
      'data.greetinghellobonjourdiffers',
      'spec{"replicas":2}(none)only in git',
      'status(none){"ready":1}only in the cluster',
    ]);
  });

  it('can leave out what only the cluster has, and says when nothing differs', () => {
    render(<FieldDiffView targetState='{"a":1}' liveState='{"a":1,"status":{}}' hideExtra />);
    expect(screen.getByText(/No difference/)).toBeTruthy();
  });
});
