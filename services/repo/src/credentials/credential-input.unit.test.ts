import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { validateCredentialInput } from './credential-input.js';
import type { CredentialInput } from './credential.js';

const ok: CredentialInput = {
  url: 'https://h.example/a.git',
  project: 'team-a',
  type: 'git',
  displayName: '',
  username: 'u',
  insecure: false,
  secret: { password: 'p' },
};

describe('validateCredentialInput', () => {
  it('accepts a well-formed credential', () => {
    expect(validateCredentialInput(ok)).toMatchObject({ url: 'https://h.example/a.git' });
  });

  it('reports every problem with its field path', () => {
    try {
      validateCredentialInput({
        ...ok,
        url: '',
        project: 'Bad Project',
        username: 'a\nb',
        secret: { password: 'x\nprotocol=evil', sshPrivateKey: 'nope' },
      });
      expect.fail('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      const fields = (err as ValidationError).violations.map((v) => v.field);
      expect(fields).toEqual(
        expect.arrayContaining(['url', 'project', 'username', 'password', 'sshPrivateKey']),
      );
      expect((err as Error).message).not.toContain('protocol=evil');
    }
  });
});
