// The internal DeliveredObjectsService (the sync service's own identity): argoproj.io objects an
// Application delivers from git, decided and written by the api (delivery/).
import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, implement, op } from '../operation.js';

export const deliveryOperations = implement<apiv1.DeliveredObjectsServiceServer>(
  apiv1.DeliveredObjectsServiceService,
  {
    apply: op({
      http: undefined,
      auth: 'user',
      summary:
        'internal (sync): decide and (unless dry run) write the AppProjects and Applications an Application delivers, all or nothing',
      input: z.strictObject({
        applicationNamespace: z.string().min(1, 'required'),
        applicationName: z.string().min(1, 'required'),
        operationId: z.string().default(''),
        objectsJson: z.array(z.string()).default([]),
        prune: bool,
        dryRun: bool,
        cascadeDelete: bool,
      }),
      request: apiv1.DeliverRequest,
      response: apiv1.DeliverResponse,
      run: async (s, ctx, i) => {
        const out = await s.deliveredObjects.apply(ctx, {
          application: { namespace: i.applicationNamespace, name: i.applicationName },
          operationId: i.operationId,
          objectsJson: i.objectsJson,
          prune: i.prune,
          dryRun: i.dryRun,
          cascadeDelete: i.cascadeDelete,
        });
        return {
          applied: out.applied,
          results: out.results.map((r) => ({
            kind: r.kind,
            namespace: r.namespace,
            name: r.name,
            action: r.action,
            status: r.status,
            message: r.reason,
          })),
        };
      },
    }),
  },
);
