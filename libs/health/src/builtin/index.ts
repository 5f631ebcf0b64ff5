// The built-in rules by group and kind (gitops-engine GetHealthCheckFunc, plus the Lua rules argo-cd
// bundles in resource_customizations that Capstan ports: batch/CronJob, argoproj.io/Application).
import type { HealthRule } from '../types.js';
import { apiServiceHealth } from './apiservice.js';
import { applicationHealth, workflowHealth } from './argo.js';
import { cronJobHealth } from './cronjob.js';
import { daemonSetHealth } from './daemonset.js';
import { deploymentHealth } from './deployment.js';
import { hpaHealth } from './hpa.js';
import { jobHealth } from './job.js';
import { podHealth } from './pod.js';
import { pvcHealth } from './pvc.js';
import { replicaSetHealth } from './replicaset.js';
import { ingressHealth, serviceHealth } from './service.js';
import { statefulSetHealth } from './statefulset.js';

const RULES: Record<string, HealthRule> = {
  'apps/Deployment': deploymentHealth,
  'apps/StatefulSet': statefulSetHealth,
  'apps/ReplicaSet': replicaSetHealth,
  'apps/DaemonSet': daemonSetHealth,
  'extensions/Ingress': ingressHealth,
  'networking.k8s.io/Ingress': ingressHealth,
  'argoproj.io/Workflow': workflowHealth,
  'argoproj.io/Application': applicationHealth,
  'apiregistration.k8s.io/APIService': apiServiceHealth,
  '/Service': serviceHealth,
  '/PersistentVolumeClaim': pvcHealth,
  '/Pod': podHealth,
  'batch/Job': jobHealth,
  'batch/CronJob': cronJobHealth,
  'autoscaling/HorizontalPodAutoscaler': hpaHealth,
};

export function builtinRule(group: string, kind: string): HealthRule | undefined {
  return RULES[`${group}/${kind}`];
}
