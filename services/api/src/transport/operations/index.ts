// Every operation of the public and internal API, one entry per proto service: each implements its
// generated server interface (see `implement` in ../operation.ts).
import type { Operation, ServiceOperations } from '../operation.js';
import { projectOperations } from './projects.js';
import { applicationOperations } from './applications.js';
import { clusterCredentialOperations, clusterOperations } from './clusters.js';
import { repositoryOperations } from './repositories.js';
import { auditOperations } from './audit.js';
import { accountOperations, sessionOperations } from './accounts.js';
import { applyOperations, settingsOperations } from './apply.js';
import {
  applicationSetOperations,
  applicationSetWriteOperations,
  delegationOperations,
} from './applicationsets.js';
import { deliveryOperations } from './delivery.js';
import { deadLetterOperations } from './dead-letters.js';

export const apiServices: ServiceOperations[] = [
  projectOperations,
  applicationOperations,
  clusterOperations,
  clusterCredentialOperations,
  repositoryOperations,
  auditOperations,
  sessionOperations,
  accountOperations,
  applyOperations,
  settingsOperations,
  applicationSetOperations,
  applicationSetWriteOperations,
  delegationOperations,
  deliveryOperations,
  deadLetterOperations,
];

export const allOperations: Operation[] = apiServices.flatMap((s) => s.operations);
