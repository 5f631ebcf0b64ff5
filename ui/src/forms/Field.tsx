// A labelled form control with the api's messages about it right below, tied to it for assistive
// technology (aria-invalid, aria-describedby), and the form's other problems above the form.
import type { ReactNode } from 'react';
import type { Placed } from './violations';

export type ControlProps = {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
};

export function Field(props: {
  id: string;
  label: string;
  errors?: string[] | undefined;
  hint?: string;
  children: (control: ControlProps) => ReactNode;
}) {
  const { id, errors, hint } = props;
  const described = [hint && `${id}-hint`, errors?.length && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children({
        id,
        ...(errors?.length ? { 'aria-invalid': true as const } : {}),
        ...(described ? { 'aria-describedby': described } : {}),
      })}
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {errors?.length ? (
        <ul id={`${id}-error`} className="field-error">
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Problems that belong to no field of the form (or an error without field details). */
export function FormErrors({ placed }: { placed: Placed }) {
  if (placed.rest.length === 0 && Object.keys(placed.byField).length === 0) return null;
  return (
    <div role="alert" className="error">
      {placed.rest.length > 0 ? (
        <ul>
          {placed.rest.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      ) : (
        <p>The api refused the form: see the fields marked below.</p>
      )}
    </div>
  );
}
