// Which Applications just changed on this replica, for the UI's live stream: the sync status
// consumer tells it after an event from the bus (an operation's progress, the reconciler's verdict)
// is applied, and each stream watching that Application reads it again (RBAC checked again). Only
// a name passes through here, never the Application itself.
import { EventEmitter } from 'node:events';

/** The bus subject of an Application's events, `applications/<namespace>/<name>`. */
export const applicationSubject = (namespace: string, name: string) => `applications/${namespace}/${name}`;

export class ApplicationChanges {
  private readonly emitter = new EventEmitter();

  constructor(maxWatchers = 10_000) {
    this.emitter.setMaxListeners(maxWatchers);
  }

  notify(subject: string): void {
    this.emitter.emit(subject);
  }

  watch(namespace: string, name: string, onChange: () => void): () => void {
    const subject = applicationSubject(namespace, name);
    this.emitter.on(subject, onChange);
    return () => this.emitter.off(subject, onChange);
  }
}
