import { describe, expect, it } from 'vitest';
import { checkArgoSettings } from './argo-settings.js';
import { readOidcConfig, readScopes } from './oidc-config.js';

describe('argocd-cm oidc.config and argocd-rbac-cm scopes (single sign-on)', () => {
  it("reads Argo CD's fields, with Argo's default scopes and openid always requested", () => {
    expect(
      readOidcConfig(
        'name: Okta\nissuer: https://sso.example.com/\nclientID: capstan\nclientSecret: $oidc.clientSecret\n' +
          'cliClientID: capstan-cli\nrequestedIDTokenClaims: { groups: { essential: true } }\n',
      ),
    ).toEqual({
      value: {
        name: 'Okta',
        issuer: 'https://sso.example.com',
        clientID: 'capstan',
        clientSecret: '$oidc.clientSecret',
        cliClientID: 'capstan-cli',
        requestedScopes: ['openid', 'profile', 'email'],
        requestedIDTokenClaims: { groups: { essential: true } },
        logoutURL: '',
      },
    });
    const minimal = readOidcConfig(
      'issuer: http://127.0.0.1:5556/dex\nclientID: c\nrequestedScopes: [groups]\n',
    );
    expect(minimal).toMatchObject({
      value: { name: 'SSO', clientSecret: '', requestedScopes: ['openid', 'groups'] },
    });
  });

  it('refuses what it cannot use, never quoting a secret back', () => {
    const problem = (text: string) => {
      const r = readOidcConfig(text);
      return 'problem' in r ? r.problem : undefined;
    };
    expect(problem('clientID: c\n')).toBe('issuer: required');
    expect(problem('issuer: ftp://x\nclientID: c\n')).toBe('issuer: must be an http(s) URL');
    expect(problem('issuer: https://x?y=1\nclientID: c\n')).toBe('issuer: must not have a query or fragment');
    expect(problem('issuer: not a url\nclientID: c\n')).toContain('issuer: must be an http(s) URL');
    expect(problem('issuer: https://x\n')).toBe('clientID: required');
    expect(problem('issuer: https://x\nclientID: [a]\n')).toBe('clientID: must be a string');
    expect(problem('issuer: https://x\nclientID: c\nrequestedScopes: "openid email"\n')).toBe(
      'requestedScopes: must be a list of scope names',
    );
    expect(problem('issuer: https://x\nclientID: c\nrequestedIDTokenClaims: [groups]\n')).toBe(
      'requestedIDTokenClaims: must be a map of claim names',
    );
    expect(problem('- a\n')).toContain('must be a map');
    expect(problem('a: [\n')).toBe('not valid YAML');
    const literal = checkArgoSettings(
      'argocd-cm',
      { 'oidc.config': 'issuer: https://x\nclientID: c\nclientSecret: hunter2\n' },
      { strict: false },
    );
    expect(literal.problems).toEqual([
      {
        key: 'argocd-cm: oidc.config',
        message:
          'clientSecret: must reference a secret key (clientSecret: $oidc.clientSecret), never hold the secret itself',
      },
    ]);
    expect(JSON.stringify(literal)).not.toContain('hunter2');
  });

  it('maps oidc.config, url and scopes to the api, live', () => {
    const cm = checkArgoSettings(
      'argocd-cm',
      { url: 'https://capstan.example.com', 'oidc.config': 'issuer: https://x\nclientID: c\n' },
      { strict: true },
    );
    expect(cm.problems).toEqual([]);
    expect(cm.mapped.map((m) => [m.key, m.spec.capstan])).toEqual([
      ['oidc.config', { service: 'api', setting: 'sso.oidc-config', live: true }],
      ['url', { service: 'api', setting: 'sso.url', live: true }],
    ]);
    expect(readScopes('[groups, email]')).toEqual({ value: ['groups', 'email'] });
    expect(readScopes('groups')).toHaveProperty('problem');
    expect(readScopes('[groups, ""]')).toHaveProperty('problem');
    expect(readScopes('[')).toHaveProperty('problem');
  });
});
