import { describe, expect, it } from 'vitest';
import { clusterDraftOf, registrationOf } from './cluster-form';

describe('cluster form', () => {
  it('sends only the chosen credential', () => {
    const d = {
      ...clusterDraftOf(),
      server: ' https://k:6443 ',
      bearerToken: 't',
      username: 'u',
      password: 'p',
    };
    expect(registrationOf(d)).toEqual({
      server: 'https://k:6443',
      name: '',
      namespaces: [],
      project: '',
      config: {
        bearerToken: 't',
        username: '',
        password: '',
        tlsClientConfig: { insecure: false, serverName: '', caData: '', certData: '', keyData: '' },
      },
    });
  });

  it('keeps the stored credential when editing without one, with the resource version', () => {
    const stored = { server: 'https://k', name: 'k', namespaces: ['a'], metadata: { resourceVersion: '3' } };
    const d = clusterDraftOf(stored);
    expect(d.credential).toBe('keep');
    expect(registrationOf({ ...d, namespaces: 'a\nb' }, stored)).toEqual({
      server: 'https://k',
      name: 'k',
      namespaces: ['a', 'b'],
      project: '',
      resourceVersion: 3,
    });
  });
});
