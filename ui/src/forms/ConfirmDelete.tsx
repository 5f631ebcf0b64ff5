// A destructive action behind a confirmation dialog (Radix: focus trap, Escape, labelled), showing
// the api's refusal in the dialog when there is one.
import { useState, type ReactNode } from 'react';
import { Dialog } from 'radix-ui';
import { ErrorAlert, CloseButton } from './DialogParts';

export function ConfirmDelete(props: {
  title: string;
  description: ReactNode;
  trigger?: string;
  triggerLabel?: string;
  pending: boolean;
  error: Error | null;
  onConfirm: () => Promise<unknown>;
}) {
  const [open, setOpen] = useState(false);
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>
        <button type="button" className="button danger" aria-label={props.triggerLabel}>
          {props.trigger ?? 'Delete'}
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>{props.title}</Dialog.Title>
          <Dialog.Description>{props.description}</Dialog.Description>
          <ErrorAlert error={props.error} />
          <div className="actions">
            <CloseButton />
            <button
              type="button"
              className="button danger"
              disabled={props.pending}
              onClick={() =>
                void props.onConfirm().then(
                  () => setOpen(false),
                  () => undefined,
                )
              }
            >
              {props.trigger ?? 'Delete'}
            </button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
