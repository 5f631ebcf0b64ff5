// An ApplicationSet's status as Argo CD writes it (applicationset_controller.go:
// setApplicationSetStatusCondition and getParametersGeneratedCondition): the three condition types
// always present, with Argo's reasons and messages, and the Applications the set owns. A condition
// keeps its lastTransitionTime while its status does not change. Pure.
import type { AppSetErrorReason } from '@capstan/appset-engine';
import type { Application } from '@capstan/policy';

export interface AppSetCondition {
  type: 'ErrorOccurred' | 'ParametersGenerated' | 'ResourcesUpToDate';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface AppSetResource {
  group: string;
  version: string;
  kind: string;
  name: string;
  namespace: string;
  project: string;
}

export interface AppSetStatus {
  conditions: AppSetCondition[];
  resources: AppSetResource[];
  appliedDigest: string;
}

export const emptyStatus = (): AppSetStatus => ({ conditions: [], resources: [], appliedDigest: '' });

export const UP_TO_DATE_MESSAGE = 'All applications have been generated successfully';
export const PARAMETERS_GENERATED_MESSAGE = 'Successfully generated parameters for all Applications';

/** Argo CD's reason strings for what went wrong. */
export type FailureReason =
  | 'ApplicationGenerationFromParamsError'
  | 'RenderTemplateParamsError'
  | 'ApplicationValidationError'
  | 'CreateApplicationError'
  | 'UpdateApplicationError'
  | 'DeleteApplicationError'
  | 'ErrorOccurred';

/** The engine's error reasons as Argo CD names them in conditions. */
export function reasonOfEngineError(reason: AppSetErrorReason): FailureReason {
  switch (reason) {
    case 'ApplicationParamsGenerationError':
    case 'ProviderMissing':
    case 'LimitExceeded':
      return 'ApplicationGenerationFromParamsError';
    case 'RenderTemplateParamsError':
      return 'RenderTemplateParamsError';
    case 'InvalidManifest':
    case 'ApplicationValidationError':
      return 'ApplicationValidationError';
  }
}

export type Outcome =
  | { kind: 'applied'; applications: readonly Application[]; digest: string }
  /** Generation failed: no parameters, nothing applied. */
  | { kind: 'generation-failed'; reason: FailureReason; message: string }
  /** Parameters generated, but the Applications were not written (refused, owner lost a right, api down). */
  | { kind: 'apply-failed'; reason: FailureReason; message: string };

type Draft = Omit<AppSetCondition, 'lastTransitionTime'>;

function drafts(outcome: Outcome): Draft[] {
  switch (outcome.kind) {
    case 'applied':
      return [
        {
          type: 'ParametersGenerated',
          status: 'True',
          reason: 'ParametersGenerated',
          message: PARAMETERS_GENERATED_MESSAGE,
        },
        {
          type: 'ResourcesUpToDate',
          status: 'True',
          reason: 'ApplicationSetUpToDate',
          message: UP_TO_DATE_MESSAGE,
        },
        {
          type: 'ErrorOccurred',
          status: 'False',
          reason: 'ApplicationSetUpToDate',
          message: UP_TO_DATE_MESSAGE,
        },
      ];
    case 'generation-failed':
    case 'apply-failed':
      return [
        outcome.kind === 'generation-failed'
          ? {
              type: 'ParametersGenerated',
              status: 'False',
              reason: 'ErrorOccurred',
              message: outcome.message,
            }
          : {
              type: 'ParametersGenerated',
              status: 'True',
              reason: 'ParametersGenerated',
              message: PARAMETERS_GENERATED_MESSAGE,
            },
        { type: 'ErrorOccurred', status: 'True', reason: outcome.reason, message: outcome.message },
        { type: 'ResourcesUpToDate', status: 'False', reason: 'ErrorOccurred', message: outcome.message },
      ];
  }
}

export function resourcesOf(apps: readonly Application[]): AppSetResource[] {
  return apps.map((a) => ({
    group: 'argoproj.io',
    version: 'v1alpha1',
    kind: 'Application',
    name: a.metadata.name,
    namespace: a.metadata.namespace ?? '',
    project: a.spec.project,
  }));
}

/**
 * The status after `outcome`. A failure keeps the resources and digest of the last successful apply
 * (the Applications were left as they were).
 */
export function nextStatus(previous: AppSetStatus, outcome: Outcome, now: Date): AppSetStatus {
  const conditions = drafts(outcome).map((d): AppSetCondition => {
    const before = previous.conditions.find((c) => c.type === d.type);
    return {
      ...d,
      lastTransitionTime:
        before && before.status === d.status ? before.lastTransitionTime : now.toISOString(),
    };
  });
  if (outcome.kind === 'applied')
    return { conditions, resources: resourcesOf(outcome.applications), appliedDigest: outcome.digest };
  return { conditions, resources: previous.resources, appliedDigest: previous.appliedDigest };
}

/** Whether the last reconcile succeeded (a no-op regeneration may then skip the apply). */
export function isUpToDate(status: AppSetStatus): boolean {
  return status.conditions.some((c) => c.type === 'ResourcesUpToDate' && c.status === 'True');
}
