// Argo CD's built-in health rules, checked on live objects (fixtures/README.md says where each comes
// from). Each case cites the Argo CD code or documentation whose behaviour it asserts:
// - GE = gitops-engine pkg/health/<file> as vendored in argoproj/argo-cd (gitops-engine/pkg/health),
// - RC = argo-cd resource_customizations/<group>/<kind>/health.lua,
// - DOC = argo-cd docs/operator-manual/health.md.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  createHealthAssessor,
  healthIgnored,
  isHook,
  isWorse,
  worstHealth,
  type HealthStatus,
} from './index.js';

// sigs.k8s.io/yaml (Argo's test loader) keeps the last of duplicate keys; statefulset-ondelete has one.
const fixture = (name: string) =>
  parse(readFileSync(new URL(`./fixtures/${name}.yaml`, import.meta.url), 'utf8'), { uniqueKeys: false });

const assessor = await createHealthAssessor();

const CASES: [fixture: string, expected: HealthStatus | undefined, cites: string][] = [
  // Deployment (GE health_deployment.go; DOC "Deployment, ReplicaSet, StatefulSet, DaemonSet")
  [
    'deployment-healthy',
    { status: 'Healthy' },
    'GE health_deployment.go: all replicas updated and available',
  ],
  [
    'deployment-progressing',
    {
      status: 'Progressing',
      message: 'Waiting for rollout to finish: 1 old replicas are pending termination...',
    },
    'GE health_deployment.go: status.replicas > updatedReplicas',
  ],
  [
    'deployment-degraded',
    { status: 'Degraded', message: 'Deployment "guestbook-ui" exceeded its progress deadline' },
    'GE health_deployment.go: Progressing condition reason ProgressDeadlineExceeded',
  ],
  [
    'deployment-suspended',
    { status: 'Suspended', message: 'Deployment is paused' },
    'GE health_deployment.go: spec.paused',
  ],
  // StatefulSet (GE health_statefulset.go)
  [
    'statefulset',
    { status: 'Healthy', message: 'statefulset has 1 ready pods' },
    'GE health_statefulset.go: OnDelete strategy, all ready',
  ],
  [
    'statefulset-ondelete',
    { status: 'Healthy', message: 'statefulset has 1 ready pods' },
    'GE health_statefulset.go: OnDelete strategy',
  ],
  [
    'statefulset-partition-rollout',
    {
      status: 'Progressing',
      message: 'Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...',
    },
    'GE health_statefulset.go: updatedReplicas < replicas - partition',
  ],
  // DaemonSet (GE health_daemonset.go)
  [
    'daemonset-ondelete',
    { status: 'Healthy', message: 'daemon set 0 out of 1 new pods have been updated' },
    'GE health_daemonset.go: OnDelete strategy is Healthy',
  ],
  [
    'daemonset-rolling',
    {
      status: 'Progressing',
      message: 'Waiting for daemon set "fluentd" rollout to finish: 1 out of 3 new pods have been updated...',
    },
    'GE health_daemonset.go: updatedNumberScheduled < desiredNumberScheduled',
  ],
  // ReplicaSet (GE health_replicaset.go)
  [
    'replicaset-available',
    { status: 'Healthy' },
    'GE health_replicaset.go: availableReplicas = spec.replicas',
  ],
  [
    'replicaset-quota-exceeded',
    {
      status: 'Degraded',
      message:
        'pods "api-5c9f7d8b6d-x2x7q" is forbidden: exceeded quota: compute, requested: limits.cpu=500m, used: limits.cpu=2, limited: limits.cpu=2',
    },
    'GE health_replicaset.go: ReplicaFailure condition True carries its message',
  ],
  // Pod (GE health_pod.go; DOC "Pod")
  ['pod-pending', { status: 'Progressing' }, 'GE health_pod.go: phase Pending'],
  [
    'pod-running-not-ready',
    { status: 'Progressing' },
    'GE health_pod.go: Running, restartPolicy Always, not ready, never terminated',
  ],
  [
    'pod-crashloop',
    {
      status: 'Degraded',
      message:
        'Back-off 40s restarting failed container=main pod=my-pod_argocd(63674389-f613-11e8-a057-fe5f49266390)',
    },
    'GE health_pod.go: waiting reason ending in BackOff (CrashLoopBackOff)',
  ],
  [
    'pod-imagepullbackoff',
    { status: 'Degraded', message: 'Back-off pulling image "gcr.io/heptio-images/ks-guestbook-demo:0.3"' },
    'GE health_pod.go: ImagePullBackOff; DOC Pod "Degraded if a container is in an error state"',
  ],
  [
    'pod-error',
    { status: 'Degraded' },
    'GE health_pod.go: Running, not ready, a container terminated before',
  ],
  ['pod-running-restart-always', { status: 'Healthy' }, 'GE health_pod.go: Running and Ready'],
  [
    'pod-running-restart-never',
    { status: 'Progressing' },
    'DOC Pod: restartPolicy Never is Progressing while running',
  ],
  [
    'pod-running-restart-never-with-ignore-annotation',
    { status: 'Healthy' },
    'DOC Pod: argocd.argoproj.io/ignore-restart-policy assesses it as long-running',
  ],
  [
    'pod-running-restart-never-hook-with-ignore-annotation',
    { status: 'Progressing' },
    'DOC Pod: the annotation has no effect on hook Pods',
  ],
  [
    'pod-failed',
    { status: 'Degraded', message: 'container "main" failed with exit code 1' },
    'GE health_pod.go: Failed without status.message, a container exit code',
  ],
  ['pod-succeeded', { status: 'Healthy' }, 'GE health_pod.go: phase Succeeded'],
  [
    'pod-deletion',
    { status: 'Progressing', message: 'Pending deletion' },
    'GE health.go GetResourceHealth: deletionTimestamp set',
  ],
  // Service and Ingress (GE health_service.go, health_ingress.go; DOC "Service", "Ingress")
  ['svc-clusterip', { status: 'Healthy' }, 'DOC Service: only LoadBalancer Services wait'],
  ['svc-loadbalancer', { status: 'Healthy' }, 'DOC Service: status.loadBalancer.ingress non-empty'],
  [
    'svc-loadbalancer-unassigned',
    { status: 'Progressing' },
    'DOC Service: LoadBalancer without an address yet',
  ],
  ['ingress', { status: 'Healthy' }, 'DOC Ingress: status.loadBalancer.ingress non-empty'],
  ['ingress-unassigned', { status: 'Progressing' }, 'DOC Ingress: no address yet'],
  // PersistentVolumeClaim (GE health_pvc.go; DOC "PersistentVolumeClaim")
  ['pvc-bound', { status: 'Healthy' }, 'DOC PVC: status.phase Bound'],
  ['pvc-pending', { status: 'Progressing' }, 'GE health_pvc.go: phase Pending'],
  // Job (GE health_job.go; DOC "Job")
  ['job-running', { status: 'Progressing' }, 'GE health_job.go: no Complete/Failed condition yet'],
  [
    'job-failed',
    { status: 'Degraded', message: 'Job has reached the specified backoff limit' },
    'GE health_job.go: Failed condition message',
  ],
  ['job-succeeded', { status: 'Healthy' }, 'GE health_job.go: Complete condition'],
  [
    'job-suspended',
    { status: 'Suspended', message: 'Job suspended' },
    'DOC Job: spec.suspend marks it Suspended',
  ],
  // CronJob (RC batch/CronJob/health.lua; DOC "CronJob")
  [
    'cronjob-suspended',
    { status: 'Healthy', message: 'CronJob is Suspended' },
    'RC: suspended reports Healthy until argo-cd#24428',
  ],
  [
    'cronjob-never-scheduled',
    { status: 'Healthy', message: 'CronJob has not been scheduled yet' },
    'RC: no lastScheduleTime',
  ],
  [
    'cronjob-running',
    { status: 'Healthy', message: 'The job is running. Its last execution may not have been successful' },
    'RC: active jobs',
  ],
  [
    'cronjob-last-failed',
    { status: 'Degraded', message: 'CronJob has not completed its last execution successfully' },
    'RC: lastSuccessfulTime < lastScheduleTime; DOC CronJob "last scheduled job failed"',
  ],
  [
    'cronjob-last-succeeded',
    { status: 'Healthy', message: 'CronJob has completed its last execution successfully' },
    'RC: last run succeeded',
  ],
  // HPA (GE health_hpa.go)
  [
    'hpa-v2-healthy',
    { status: 'Healthy', message: 'recommended size matches current size' },
    'GE health_hpa.go: AbleToScale True',
  ],
  [
    'hpa-v2-degraded',
    {
      status: 'Degraded',
      message:
        'the HPA controller was unable to get the target\'s current scale: deployments/scale.apps "sandbox-test-app-8" not found',
    },
    'GE health_hpa.go: AbleToScale FailedGetScale',
  ],
  [
    'hpa-v2-progressing',
    { status: 'Progressing', message: 'Waiting to Autoscale' },
    'GE health_hpa.go: no decisive condition',
  ],
  [
    'hpa-v1-degraded',
    { status: 'Degraded', message: "the HPA controller was unable to get the target's current scale" },
    'GE health_hpa.go: v1 conditions annotation',
  ],
  [
    'hpa-v1-healthy',
    {
      status: 'Healthy',
      message:
        'recent recommendations were higher than current one, applying the highest recent recommendation',
    },
    'GE health_hpa.go: v1 conditions annotation AbleToScale True',
  ],
  [
    'hpa-v1-progressing-with-no-annotations',
    { status: 'Progressing', message: 'Waiting to Autoscale' },
    'GE health_hpa.go: v1 without the annotation',
  ],
  // APIService (GE health_apiservice.go)
  [
    'apiservice-v1-true',
    { status: 'Healthy', message: 'Passed: all checks passed' },
    'GE health_apiservice.go: Available True, "reason: message"',
  ],
  [
    'apiservice-v1-false',
    {
      status: 'Progressing',
      message:
        'MissingEndpoints: endpoints for service/cert-manager-webhook in "external-dns" have no addresses',
    },
    'GE health_apiservice.go: Available False',
  ],
  [
    'apiservice-v1beta1-true',
    { status: 'Healthy', message: 'Passed: all checks passed' },
    'GE health_apiservice.go: v1beta1',
  ],
  // Application (DOC "Argocd App": the documented customization, built in by Capstan)
  ['application-healthy', { status: 'Healthy' }, 'DOC Argocd App: status.health.status'],
  ['application-degraded', { status: 'Degraded' }, 'DOC Argocd App: status.health.status'],
  // A kind without a rule (GE health_test.go TestCRD: knative Service has none)
  ['knative-service', undefined, 'GE health.go: GetHealthCheckFunc returns nil for unknown kinds'],
];

describe('built-in health rules on live objects', () => {
  it.each(CASES)('%s', (name, expected) => {
    expect(assessor.assess(fixture(name))).toEqual(expected);
  });
});

describe('generic rules', () => {
  it('a missing object is Missing (GE health.go HealthStatusMissing)', () => {
    expect(assessor.assess(undefined)).toEqual({ status: 'Missing' });
  });

  it("a hook being deleted but held by Argo's hook finalizer is assessed by its rule (GE health.go)", () => {
    const job = fixture('job-succeeded');
    job.metadata.deletionTimestamp = '2024-06-11T03:05:00Z';
    expect(assessor.assess(job)).toEqual({ status: 'Progressing', message: 'Pending deletion' });
    job.metadata.finalizers = ['argocd.argoproj.io/hook-finalizer'];
    expect(assessor.assess(job)).toEqual({ status: 'Healthy' });
  });

  it('a version the typed conversion does not know is Unknown with its error (GE health_deployment.go)', () => {
    const d = { ...fixture('deployment-healthy'), apiVersion: 'apps/v1beta2' };
    expect(assessor.assess(d)).toEqual({
      status: 'Unknown',
      message: 'unsupported Deployment GVK: apps/v1beta2, Kind=Deployment',
    });
  });

  it('a Deployment whose generation is not observed yet is Progressing (GE health_deployment.go)', () => {
    const d = fixture('deployment-healthy');
    d.metadata.generation = (d.status.observedGeneration as number) + 1;
    expect(assessor.assess(d)).toEqual({
      status: 'Progressing',
      message: 'Waiting for rollout to finish: observed deployment generation less than desired generation',
    });
  });

  it('a Deployment with updated but unavailable replicas says how many are available (GE health_deployment.go)', () => {
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', generation: 2 },
      spec: { replicas: 3 },
      status: { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 },
    };
    expect(assessor.assess(d)).toEqual({
      status: 'Progressing',
      message: 'Waiting for rollout to finish: 1 of 3 updated replicas are available...',
    });
    d.status.updatedReplicas = 1;
    expect(assessor.assess(d)?.message).toBe(
      'Waiting for rollout to finish: 1 out of 3 new replicas have been updated...',
    );
  });

  it('an invalid HPA v1 conditions annotation is Unknown (GE health_hpa.go)', () => {
    const h = fixture('hpa-v1-degraded');
    h.metadata.annotations['autoscaling.alpha.kubernetes.io/conditions'] = '{not json';
    expect(assessor.assess(h)?.status).toBe('Unknown');
    expect(assessor.assess(h)?.message).toMatch(/^failed to convert conditions annotation to typed: /);
  });

  it('Argo Workflows by phase (GE health_argo.go)', () => {
    const wf = (phase: string) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Workflow',
      status: { phase, message: 'm' },
    });
    expect(assessor.assess(wf('Running'))).toEqual({ status: 'Progressing', message: 'm' });
    expect(assessor.assess(wf('Succeeded'))).toEqual({ status: 'Healthy', message: 'm' });
    expect(assessor.assess(wf('Error'))).toEqual({ status: 'Degraded', message: 'm' });
    expect(assessor.assess(wf('Odd'))).toEqual({ status: 'Unknown', message: 'm' });
  });

  it('hooks are recognised as gitops-engine hook.IsHook does (Skip alone is not a hook)', () => {
    const withHook = (v: Record<string, string>) => ({ metadata: { annotations: v } });
    expect(isHook(withHook({ 'argocd.argoproj.io/hook': 'PreSync' }))).toBe(true);
    expect(isHook(withHook({ 'argocd.argoproj.io/hook': 'Skip' }))).toBe(false);
    expect(isHook(withHook({ 'helm.sh/hook': 'pre-install' }))).toBe(true);
    expect(isHook(withHook({}))).toBe(false);
  });

  it('ignore-healthcheck is read as Argo does (DOC "Ignoring Child Resource Health Check")', () => {
    expect(
      healthIgnored({ metadata: { annotations: { 'argocd.argoproj.io/ignore-healthcheck': 'true' } } }),
    ).toBe(true);
    expect(
      healthIgnored({ metadata: { annotations: { 'argocd.argoproj.io/ignore-healthcheck': 'yes' } } }),
    ).toBe(false);
    expect(healthIgnored(undefined)).toBe(false);
  });
});

describe('worstHealth (GE health.go healthOrder / IsWorse)', () => {
  it('orders Healthy < Suspended < Progressing < Missing < Degraded < Unknown', () => {
    expect(worstHealth([])).toBe('Healthy');
    expect(worstHealth(['Healthy', 'Suspended'])).toBe('Suspended');
    expect(worstHealth(['Progressing', 'Suspended'])).toBe('Progressing');
    expect(worstHealth(['Missing', 'Progressing'])).toBe('Missing');
    expect(worstHealth(['Missing', 'Degraded'])).toBe('Degraded');
    expect(worstHealth(['Unknown', 'Degraded', 'Healthy'])).toBe('Unknown');
    expect(isWorse('Degraded', 'Progressing')).toBe(false);
  });
});
