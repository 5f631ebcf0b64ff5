import { describe, expect, it } from 'vitest';
import { operationName } from './operation.js';
import { allOperations, apiServices } from './operations/index.js';

describe('the operation table', () => {
  it('names an operation after its generated method path', () => {
    expect(operationName('/capstan.api.v1.ProjectService/Create')).toBe('ProjectService.Create');
    expect(operationName('/capstan.api.v1.ClusterCredentials/Get')).toBe('ClusterCredentials.Get');
  });

  it('serves every method of every generated service definition, and nothing else', () => {
    for (const svc of apiServices) {
      const served = svc.operations.map((o) => o.grpcMethod).sort();
      expect(served).toEqual(Object.keys(svc.definition).sort());
    }
  });

  it('gives every operation a unique name and every HTTP route one operation', () => {
    const names = allOperations.map((o) => o.name);
    expect(new Set(names).size).toBe(names.length);
    const routes = allOperations.flatMap((o) => (o.http ? [`${o.http.method} ${o.http.path}`] : []));
    expect(new Set(routes).size).toBe(routes.length);
    expect(names).toContain('ApplicationService.Sync');
  });
});
