// Sync and health as a word with a colour and a symbol (never colour alone).
const HEALTH: Record<string, string> = {
  Healthy: '♥',
  Progressing: '◔',
  Degraded: '✖',
  Suspended: '⏸',
  Missing: '?',
  Unknown: '?',
};
const SYNC: Record<string, string> = { Synced: '✔', OutOfSync: '↻', Unknown: '?' };

export function HealthBadge({ status }: { status: string }) {
  return (
    <span className={`badge health-${status.toLowerCase()}`}>
      <span aria-hidden="true">{HEALTH[status] ?? '?'}</span> {status}
    </span>
  );
}

export function SyncBadge({ status }: { status: string }) {
  return (
    <span className={`badge sync-${status.toLowerCase()}`}>
      <span aria-hidden="true">{SYNC[status] ?? '?'}</span> {status}
    </span>
  );
}
