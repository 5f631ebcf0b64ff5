// What RBAC's refusal looks like: who asked, what the api said (its message names the action and
// the object), and that asking again will not help.
import { useUserInfo } from './session';
import type { ApiError } from '../api/errors';

export function Denied({ error, what }: { error: ApiError; what: string }) {
  const user = useUserInfo();
  return (
    <section className="page denied" role="alert" aria-labelledby="denied-title">
      <h1 id="denied-title">Permission denied</h1>
      <p>
        <strong>{user.data?.username ?? 'You'}</strong> may not {what}.
      </p>
      <p className="muted">The api said: {error.message}</p>
      <p className="muted">
        Your groups: {(user.data?.groups ?? []).join(', ') || 'none'}. Ask a project or platform admin for a
        role that allows it.
      </p>
    </section>
  );
}
