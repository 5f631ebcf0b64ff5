import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, implement, op } from '../operation.js';

export const applyOperations = implement<apiv1.ApplyServiceServer>(apiv1.ApplyServiceService, {
  apply: op({
    http: { method: 'POST', path: '/api/v1/apply' },
    auth: 'user',
    summary:
      'apply Argo CD manifests (AppProject, Application, repository and cluster Secrets); all or nothing on bad input',
    largeStrings: new Set(['manifests']),
    input: z.strictObject({ manifests: z.string().min(1, 'required'), dryRun: bool, strict: bool }),
    request: apiv1.ApplyRequest,
    response: apiv1.ApplyResponse,
    run: (s, ctx, i) => s.apply.apply(ctx, i.manifests, { dryRun: i.dryRun, strict: i.strict }),
  }),
});

export const settingsOperations = implement<apiv1.SettingsServiceServer>(apiv1.SettingsServiceService, {
  get: op({
    http: { method: 'GET', path: '/api/v1/settings' },
    auth: 'user',
    summary:
      'the settings in force: applied Argo CD configuration keys and the api settings, with their sources (secrets: set or unset)',
    input: z.strictObject({ showSource: bool }),
    request: apiv1.GetSettingsRequest,
    response: apiv1.GetSettingsResponse,
    run: async (s, ctx, i) => ({ settings: await s.settingsView.get(ctx, i.showSource) }),
  }),
});
