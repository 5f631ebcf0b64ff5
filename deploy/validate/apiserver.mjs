// A real kube-apiserver + etcd (the test tooling's, @capstan/test/kube) accepts the objects: each set
// is applied server-side with @kubernetes/client-node (PatchStrategy.ServerSideApply, the field
// manager capstan-deploy-check, as `kubectl apply --server-side`), or with dryRun=All. A refusal or
// any warning (Pod Security "restricted" violations and deprecations come as warnings) is a failure.
import {
  KubernetesObjectApi,
  PatchStrategy,
  ServerConfiguration,
  createConfiguration,
} from '@kubernetes/client-node';
import { startCluster } from '@capstan/test/kube';
import { check } from './report.mjs';

const FIELD_MANAGER = 'capstan-deploy-check';

/**
 * `steps`: [{ name, objects, dryRun? }], applied in order, each object in its order (a Namespace
 * before what lives in it, a CustomResourceDefinition before its resources: it is waited for).
 */
export async function applyToApiServer(steps) {
  const cluster = await startCluster({ name: 'deploy-check', log: () => {} });
  try {
    const warnings = [];
    const client = objectClient(cluster.adminKubeconfig, warnings);
    for (const step of steps) await applyStep(client, step, warnings);
  } finally {
    await cluster.stop();
  }
}

/**
 * An object client that sends each applied object exactly as built, with strict field validation
 * (as `kubectl apply --server-side`, whose --validate defaults to strict), and collects every
 * response's Warning headers in `warnings`. Left to itself, client-node serializes the body through
 * its typed models, which drop fields they do not know (a misspelt field would never reach the
 * server) and the `x-kubernetes-*` keys of CRD schemas.
 */
function objectClient(kc, warnings) {
  const client = { applying: undefined };
  const asBuilt = {
    pre: async (context) => {
      if (context.getHttpMethod() === 'PATCH' && client.applying) {
        context.setBody(JSON.stringify(client.applying));
        context.setQueryParam('fieldValidation', 'Strict');
      }
      return context;
    },
    post: async (response) => {
      if (response.headers.warning) warnings.push(response.headers.warning);
      return response;
    },
  };
  client.api = new KubernetesObjectApi(
    createConfiguration({
      baseServer: new ServerConfiguration(kc.getCurrentCluster().server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [asBuilt],
    }),
  );
  return client;
}

async function applyStep(client, { name, objects, dryRun = false }, warnings) {
  let accepted = 0;
  for (const obj of objects) {
    const what = `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
    warnings.length = 0;
    client.applying = obj;
    try {
      const strategy = PatchStrategy.ServerSideApply;
      await client.api.patch(obj, undefined, dryRun ? 'All' : undefined, FIELD_MANAGER, false, strategy);
    } catch (err) {
      check(false, `kube-apiserver: ${name}: ${what}: ${refusal(err)}`);
      continue;
    } finally {
      client.applying = undefined;
    }
    check(warnings.length === 0, `kube-apiserver: ${name}: ${what}: warning: ${warnings.join('; ')}`);
    if (warnings.length === 0) accepted++;
    if (obj.kind === 'CustomResourceDefinition' && !dryRun) await established(client.api, obj);
  }
  if (accepted === objects.length)
    console.log(
      `kube-apiserver accepted ${name}${dryRun ? ' (server-side dry-run)' : ' (server-side apply)'}: ${accepted} objects, no warnings`,
    );
}

/** The API server's reason (its Status message), else the error's. */
function refusal(err) {
  const body = typeof err.body === 'string' ? safeJson(err.body) : err.body;
  return body?.message ?? err.message;
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Waits until the CRD is Established and its kind is served (discovery included), up to 30 s. */
async function established(client, crd) {
  const version = crd.spec.versions.find((v) => v.served)?.name;
  const apiVersion = `${crd.spec.group}/${version}`;
  for (let i = 0; i < 60; i++) {
    const live = await client.read(crd).catch(() => undefined);
    const ready = live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (
      ready &&
      (await client.list(apiVersion, crd.spec.names.kind).then(
        () => true,
        () => false,
      ))
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  check(false, `kube-apiserver: ${crd.metadata.name} not established within 30 s`);
}
