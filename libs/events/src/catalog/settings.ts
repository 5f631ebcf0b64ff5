// Argo CD's configuration objects applied through the api (argocd-cm, argocd-rbac-cm,
// argocd-cmd-params-cm, argocd-secret), written by the api (the owner). Each event carries the whole
// applied object as it now is, so the latest one per object is the state: services apply it without
// restart. Never a secret value: the keys of argocd-secret and the sensitive keys of argocd-cm
// (dex.config) are listed by name only (oidc.config holds no secret: its clientSecret is a $reference).
import { z } from 'zod';
import { defineEvent } from './define.js';

export const settingsChanged = defineEvent({
  type: 'io.capstan.settings.changed.v1',
  description:
    'an Argo CD configuration object was applied (subject settings/<name>); data holds every non-sensitive key as applied',
  data: z.object({
    object: z.enum(['argocd-cm', 'argocd-rbac-cm', 'argocd-cmd-params-cm', 'argocd-secret']),
    version: z.number().int().positive(),
    /** Every non-sensitive key of the object as applied (Argo's string values). */
    data: z.record(z.string(), z.string()),
    /** Keys that are set but whose values are withheld (secrets). */
    sensitiveKeys: z.array(z.string()),
    /** Keys added, removed or changed by this version. */
    changedKeys: z.array(z.string()),
  }),
});

export const settingsEvents = [settingsChanged] as const;
