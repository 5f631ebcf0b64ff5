// Which credential applies: the design's pure rules ("Credential selection"), in @capstan/policy so
// that the api answers "which projects share a checkout" with the same function this service's
// checkouts, get/delete and mutations use.
export {
  findForMutation,
  resolveForApi,
  selectForProject,
  type ApiResolution,
  type Candidate,
  type LookupDecision,
  type LookupReason,
} from '@capstan/policy';
