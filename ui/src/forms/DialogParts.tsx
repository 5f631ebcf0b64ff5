// What every dialog and form shows the same way: the modal frame (trigger, overlay, title and
// description), the api's refusal as an alert, and the button that closes the dialog it is in.
import type { ReactNode } from 'react';
import { Dialog } from 'radix-ui';

/** A modal opened by `trigger` (a button element), titled and described for assistive technology. */
export function ModalDialog(props: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  trigger: ReactNode;
  title: ReactNode;
  description: ReactNode;
  children: ReactNode;
}) {
  return (
    <Dialog.Root open={props.open} onOpenChange={props.onOpenChange}>
      <Dialog.Trigger asChild>{props.trigger}</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>{props.title}</Dialog.Title>
          <Dialog.Description>{props.description}</Dialog.Description>
          {props.children}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

/** The error's message as an alert; nothing without an error. */
export function ErrorAlert(props: { error: Error | null | undefined }) {
  if (!props.error) return null;
  return (
    <p role="alert" className="error">
      {props.error.message}
    </p>
  );
}

/** Closes the dialog it is in: a ghost button labelled Cancel unless told otherwise. */
export function CloseButton(props: { label?: string; primary?: boolean }) {
  return (
    <Dialog.Close asChild>
      <button type="button" className={props.primary ? 'button primary' : 'button ghost'}>
        {props.label ?? 'Cancel'}
      </button>
    </Dialog.Close>
  );
}
