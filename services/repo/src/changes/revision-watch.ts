// A watched source (repository URL, target revision, project) as an event-sourced aggregate: its
// state is the commit it last resolved to; deciding on a fresh resolution yields a
// revision-changed event only when the commit moved. Pure, so the rule is tested without I/O.
import { createHash } from 'node:crypto';
import { newEvent, type EventOf, type repositoryRevisionChanged } from '@capstan/events';
import { normalizeRepoUrl } from '../credentials/repo-url.js';

export type RevisionChanged = EventOf<typeof repositoryRevisionChanged>;

export interface WatchKey {
  repoURL: string;
  revision: string;
  project: string;
}

export interface WatchState {
  sha: string | null;
}

export const initialWatchState = (): WatchState => ({ sha: null });

export function watchStreamId(key: WatchKey): string {
  const id = createHash('sha256')
    .update(`${normalizeRepoUrl(key.repoURL)}\n${key.revision}\n${key.project}`)
    .digest('hex')
    .slice(0, 24);
  return `repository-watches/${id}`;
}

export function evolveWatch(state: WatchState, event: RevisionChanged): WatchState {
  return { sha: event.data.sha };
}

export function decideWatch(
  state: WatchState,
  observation: { key: WatchKey; sha: string; detectedBy: 'poll' | 'push' },
  meta: { actor: string; correlationId?: string; causationId?: string },
): RevisionChanged[] {
  if (state.sha === observation.sha) return [];
  return [
    newEvent(
      'io.capstan.repository.revision-changed.v1',
      {
        repoURL: observation.key.repoURL,
        revision: observation.key.revision,
        project: observation.key.project,
        sha: observation.sha,
        previousSha: state.sha,
        detectedBy: observation.detectedBy,
      },
      {
        subject: watchStreamId(observation.key),
        source: 'capstan/repo',
        actor: meta.actor,
        ...(meta.correlationId ? { correlationId: meta.correlationId } : {}),
        ...(meta.causationId ? { causationId: meta.causationId } : {}),
      },
    ),
  ];
}
