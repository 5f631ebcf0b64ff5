// Target cluster events, written by the api (the owner). Never any credential: consumers that need
// one (the sync service) ask the api over authenticated gRPC (capstan.api.v1.ClusterCredentials/Get).
import { z } from 'zod';
import { defineEvent } from './define.js';

export const clusterInfoSchema = z.object({
  name: z.string(),
  server: z.string(),
  project: z.string().optional(),
  namespaces: z.array(z.string()),
  labels: z.record(z.string(), z.string()),
  /** bearer, basic, tls or none: which kind of credential is stored. */
  credentialType: z.string(),
  /** Id of the key the credential is sealed with. */
  keyId: z.string(),
  insecure: z.boolean(),
  serverName: z.string(),
  hasCaData: z.boolean(),
});

export const clusterRegistered = defineEvent({
  type: 'io.capstan.cluster.registered.v1',
  description: 'a target cluster was registered (subject clusters/<server>)',
  data: z.object({ cluster: clusterInfoSchema, uid: z.string() }),
});

export const clusterUpdated = defineEvent({
  type: 'io.capstan.cluster.updated.v1',
  description: 'a target cluster changed; credentialsChanged says whether its credentials were replaced',
  data: z.object({ cluster: clusterInfoSchema, credentialsChanged: z.boolean() }),
});

export const clusterRemoved = defineEvent({
  type: 'io.capstan.cluster.removed.v1',
  description: 'a target cluster was removed',
  data: z.object({ name: z.string(), server: z.string() }),
});

export const clusterEvents = [clusterRegistered, clusterUpdated, clusterRemoved] as const;
