// "Managed By" of `proj get` and `app get`: the Application that delivered the object from git,
// read from its Argo CD tracking id (the api stamps it; users cannot write it).
import { TRACKING_ANNOTATION, trackedBy } from '@capstan/policy';

export function managedBy(annotations: Record<string, string> | undefined): string {
  const app = trackedBy(annotations?.[TRACKING_ANNOTATION]);
  return app ? `Application ${app.namespace}/${app.name} (delivered from git)` : '<none>';
}
