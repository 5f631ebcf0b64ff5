// ApplicationSets on Argo CD's HTTP paths (public, forwarded to the appset service), and the api's
// internal services the appset service calls back (gRPC only; the callers are checked inside).
import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, implement, op, resource, str, strList } from '../operation.js';
import { invalid } from '../../support/validation.js';

const setQuery = z.strictObject({ name: z.string().min(1, 'required'), appsetNamespace: str });

export const applicationSetOperations = implement<apiv1.ApplicationSetServiceServer>(
  apiv1.ApplicationSetServiceService,
  {
    get: op({
      http: { method: 'GET', path: '/api/v1/applicationsets/:name' },
      auth: 'user',
      summary:
        'get an ApplicationSet with its status (visible when the caller may get every Application it owns)',
      input: setQuery,
      request: apiv1.ApplicationSetGetQuery,
      response: apiv1.ApplicationSet,
      run: (s, ctx, i) => s.applicationSets.get(ctx, i.appsetNamespace, i.name),
    }),
    list: op({
      http: { method: 'GET', path: '/api/v1/applicationsets' },
      auth: 'user',
      summary:
        'list the ApplicationSets the caller may see (projects: sets with an Application in one of them)',
      input: z.strictObject({ projects: strList, selector: str, appsetNamespace: str }),
      request: apiv1.ApplicationSetListQuery,
      response: apiv1.ApplicationSetList,
      run: async (s, ctx, i) => ({ items: await s.applicationSets.list(ctx, i) }),
    }),
    create: op({
      http: { method: 'POST', path: '/api/v1/applicationsets', body: 'applicationset' },
      auth: 'user',
      summary:
        'create an ApplicationSet (upsert updates it): every generated Application is checked for the caller, all or nothing',
      input: z.strictObject({ applicationset: resource, upsert: bool, dryRun: bool }),
      request: apiv1.ApplicationSetCreateRequest,
      response: apiv1.ApplicationSet,
      run: (s, ctx, i) =>
        s.applicationSets.create(ctx, i.applicationset, { upsert: i.upsert, dryRun: i.dryRun }),
    }),
    delete: op({
      http: { method: 'DELETE', path: '/api/v1/applicationsets/:name' },
      auth: 'user',
      summary:
        'delete an ApplicationSet and (unless preserved) its Applications; the caller must be allowed to delete each',
      input: setQuery,
      request: apiv1.ApplicationSetDeleteRequest,
      response: apiv1.ApplicationSetResponse,
      run: async (s, ctx, i) => ({
        applications: await s.applicationSets.delete(ctx, i.appsetNamespace, i.name),
      }),
    }),
    generate: op({
      http: { method: 'POST', path: '/api/v1/applicationsets/generate' },
      auth: 'user',
      summary:
        "the Applications an ApplicationSet would generate, with the caller's verdict on each; writes nothing",
      // applicationSet is Argo CD's JSON name; applicationset the proto field's.
      input: z.strictObject({ applicationSet: resource.optional(), applicationset: resource.optional() }),
      request: apiv1.ApplicationSetGenerateRequest,
      response: apiv1.ApplicationSetGenerateResponse,
      run: (s, ctx, i) => {
        const set = i.applicationSet ?? i.applicationset;
        if (!set) throw invalid('applicationSet', 'required');
        return s.applicationSets.generate(ctx, set);
      },
    }),
  },
);

export const applicationSetWriteOperations = implement<apiv1.ApplicationSetWritesServiceServer>(
  apiv1.ApplicationSetWritesServiceService,
  {
    checkInputs: op({
      http: undefined,
      auth: 'user',
      summary:
        'internal (appset, delegated): may the user read these generator inputs and create some Application',
      input: z.strictObject({
        applicationSet: z.string().min(1, 'required'),
        repoUrls: strList,
        readsClusters: bool,
      }),
      request: apiv1.CheckInputsRequest,
      response: apiv1.CheckInputsResponse,
      run: (s, ctx, i) => s.generatorInputs.checkInputs(ctx, i),
    }),
    apply: op({
      http: undefined,
      auth: 'user',
      summary:
        "internal (appset, delegated): decide and (unless dry run) write a set's Applications, all or nothing",
      input: z.strictObject({
        applicationSet: z.string().min(1, 'required'),
        applicationsJson: z.array(z.string()).default([]),
        dryRun: bool,
        allowUpdate: bool,
        deleteMissing: bool,
        deleteAll: bool,
        preserveResources: bool,
      }),
      request: apiv1.ApplyGeneratedRequest,
      response: apiv1.ApplyGeneratedResponse,
      run: (s, ctx, i) => s.generatedApplications.apply(ctx, i),
    }),
    listClusters: op({
      http: undefined,
      auth: 'user',
      summary: 'internal (appset, delegated): the clusters the user may get, for the clusters generator',
      input: z.strictObject({}),
      request: apiv1.ListGeneratorClustersRequest,
      response: apiv1.ListGeneratorClustersResponse,
      run: async (s, ctx) => ({ clusters: await s.generatorInputs.listClusters(ctx) }),
    }),
  },
);

export const delegationOperations = implement<apiv1.DelegationServiceServer>(apiv1.DelegationServiceService, {
  recordOwner: op({
    http: undefined,
    auth: 'user',
    summary: "internal (appset, with the user's delegation): record the user as the owner of a set",
    input: z.strictObject({ resource: z.string().min(1, 'required') }),
    request: apiv1.RecordOwnerRequest,
    response: apiv1.RecordOwnerResponse,
    run: (s, ctx, i) => s.setOwners.recordOwner(ctx, i.resource),
  }),
  issueOwnerDelegation: op({
    http: undefined,
    auth: 'user',
    summary: "internal (appset's own identity): a short-lived delegation for a set's recorded owner",
    input: z.strictObject({
      resource: z.string().min(1, 'required'),
      audience: z.string().min(1, 'required'),
    }),
    request: apiv1.IssueOwnerDelegationRequest,
    response: apiv1.IssueOwnerDelegationResponse,
    run: (s, ctx, i) => s.setOwners.issueOwnerDelegation(ctx, i.resource, i.audience),
  }),
});
