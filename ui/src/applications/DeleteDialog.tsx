// Delete with Argo CD's cascade choice: foreground (resources first), background, or non-cascading
// (the resources stay in the cluster).
import { useState } from 'react';
import { Dialog } from 'radix-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useLocation } from 'wouter';
import { api, unwrap } from '../api/client';
import type { Application } from '../api/views';
import { ErrorAlert, CloseButton } from '../forms/DialogParts';

const CHOICES = [
  { value: 'foreground', label: 'Foreground: delete the resources, then the Application' },
  { value: 'background', label: 'Background: delete the Application, the resources after' },
  { value: 'non-cascading', label: 'Non-cascading: keep the resources in the cluster' },
] as const;

export function DeleteDialog({ app }: { app: Application }) {
  const qc = useQueryClient();
  const [, navigate] = useLocation();
  const [choice, setChoice] = useState<(typeof CHOICES)[number]['value']>('foreground');
  const { name, namespace = '' } = app.metadata;
  const del = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.DELETE('/api/v1/applications/{name}', {
          params: {
            path: { name },
            query:
              choice === 'non-cascading'
                ? { appNamespace: namespace, cascade: false }
                : { appNamespace: namespace, cascade: true, propagationPolicy: choice },
          },
        }),
      ),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['applications'] });
      navigate('/applications');
    },
  });
  return (
    <Dialog.Root>
      <Dialog.Trigger asChild>
        <button type="button" className="button danger">
          Delete
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>Delete {name}</Dialog.Title>
          <Dialog.Description>Choose what happens to the resources it manages.</Dialog.Description>
          <fieldset>
            <legend>Propagation</legend>
            {CHOICES.map((c) => (
              <label key={c.value} className="check">
                <input
                  type="radio"
                  name="propagation"
                  value={c.value}
                  checked={choice === c.value}
                  onChange={() => setChoice(c.value)}
                />{' '}
                {c.label}
              </label>
            ))}
          </fieldset>
          <ErrorAlert error={del.error} />
          <div className="actions">
            <CloseButton />
            <button
              type="button"
              className="button danger"
              disabled={del.isPending}
              onClick={() => del.mutate()}
            >
              Delete
            </button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
