// Every operation of the public and internal API, grouped by proto service.
import { apiv1 } from '@capstan/proto';
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { Operation } from '../operation.js';
import { projectOperations } from './projects.js';
import { applicationOperations } from './applications.js';
import { clusterCredentialOperations, clusterOperations } from './clusters.js';
import { repositoryOperations } from './repositories.js';
import { auditOperations } from './audit.js';
import { accountOperations, sessionOperations } from './accounts.js';
import { applyOperations } from './apply.js';
import {
  applicationSetOperations,
  applicationSetWriteOperations,
  delegationOperations,
} from './applicationsets.js';
import { deliveryOperations } from './delivery.js';
import { deadLetterOperations } from './dead-letters.js';

export interface ServiceOperations {
  definition: ServiceDefinition;
  operations: Operation[];
}

export const apiServices: ServiceOperations[] = [
  { definition: apiv1.ProjectServiceService as unknown as ServiceDefinition, operations: projectOperations },
  {
    definition: apiv1.ApplicationServiceService as unknown as ServiceDefinition,
    operations: applicationOperations,
  },
  { definition: apiv1.ClusterServiceService as unknown as ServiceDefinition, operations: clusterOperations },
  {
    definition: apiv1.ClusterCredentialsService as unknown as ServiceDefinition,
    operations: clusterCredentialOperations,
  },
  {
    definition: apiv1.RepositoryServiceService as unknown as ServiceDefinition,
    operations: repositoryOperations,
  },
  { definition: apiv1.AuditServiceService as unknown as ServiceDefinition, operations: auditOperations },
  { definition: apiv1.SessionServiceService as unknown as ServiceDefinition, operations: sessionOperations },
  { definition: apiv1.AccountServiceService as unknown as ServiceDefinition, operations: accountOperations },
  { definition: apiv1.ApplyServiceService as unknown as ServiceDefinition, operations: applyOperations },
  {
    definition: apiv1.ApplicationSetServiceService as unknown as ServiceDefinition,
    operations: applicationSetOperations,
  },
  {
    definition: apiv1.ApplicationSetWritesServiceService as unknown as ServiceDefinition,
    operations: applicationSetWriteOperations,
  },
  {
    definition: apiv1.DelegationServiceService as unknown as ServiceDefinition,
    operations: delegationOperations,
  },
  {
    definition: apiv1.DeliveredObjectsServiceService as unknown as ServiceDefinition,
    operations: deliveryOperations,
  },
  {
    definition: apiv1.DeadLetterServiceService as unknown as ServiceDefinition,
    operations: deadLetterOperations,
  },
];

export const allOperations: Operation[] = apiServices.flatMap((s) => s.operations);
