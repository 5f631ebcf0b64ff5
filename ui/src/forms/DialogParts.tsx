// What every dialog and form shows the same way: the api's refusal as an alert, and the button that
// closes the dialog it is in.
import { Dialog } from 'radix-ui';

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
