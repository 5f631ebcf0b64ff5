// One way to show a query that has not succeeded: loading, a denial page, or the error's message.
import type { ReactNode } from 'react';
import { isDenied } from '../api/errors';
import { Denied } from '../auth/Denied';
import { ErrorAlert } from '../forms/DialogParts';

export function QueryState(props: {
  isPending: boolean;
  error: Error | null;
  what: string;
  children: () => ReactNode;
}) {
  if (props.error) {
    if (isDenied(props.error)) return <Denied error={props.error} what={props.what} />;
    return <ErrorAlert error={props.error} />;
  }
  if (props.isPending) return <p className="loading">Loading…</p>;
  return <>{props.children()}</>;
}
