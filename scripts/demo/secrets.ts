// The stack's secrets: generated once, kept in .capstan/secrets.json (mode 600) so that a second
// `npm run up` keeps the same admin password, and handed to each process through its environment
// only (argv is visible to every user of the machine). `npm run down` removes the file.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { busUsers, generatePasswords } from '@capstan/bus-auth';
import { extSources, installation, paths } from './stack.js';

export interface StackSecrets {
  adminPassword: string;
  /** HMAC key of the api's session and API tokens. */
  signingKey: string;
  /** Keyring of the api's sealed cluster credentials. */
  apiEncryptionKeys: string;
  /** Keyring of the repo service's repository credentials. */
  repoEncryptionKeys: string;
  /** One token per calling service and callee. */
  tokens: {
    syncToApi: string;
    appsetToApi: string;
    apiToRepo: string;
    syncToRepo: string;
    appsetToRepo: string;
    apiToAppset: string;
    apiToSync: string;
  };
  /** The api's Ed25519 delegation key (PKCS#8 PEM) and its public half for repo and appset. */
  delegationKey: string;
  delegationPublicKey: string;
  /** Basic-auth password of the demo git server's guestbook repository. */
  gitPassword: string;
  /** argocd-secret's webhook.gogs.secret: the git server signs its push deliveries with it. */
  webhookSecret: string;
  /** Dex's static client `capstan`: argocd-secret's oidc.clientSecret names it for the api. */
  dexClientSecret: string;
  /** The single sign-on user's password at Dex (Dex keeps only its bcrypt hash). */
  ssoPassword: string;
  /** Bus passwords by NATS user (api, sync, repo, appset, ext-git, admin): see @capstan/bus-auth. */
  natsPasswords: Record<string, string>;
}

const token = () => randomBytes(32).toString('base64url');
const keyring = () => JSON.stringify({ active: 'k1', keys: { k1: randomBytes(32).toString('base64') } });

function generate(): StackSecrets {
  const delegation = generateKeyPairSync('ed25519');
  return {
    delegationKey: delegation.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    delegationPublicKey: delegation.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    adminPassword: randomBytes(12).toString('base64url'),
    signingKey: randomBytes(32).toString('base64'),
    apiEncryptionKeys: keyring(),
    repoEncryptionKeys: keyring(),
    tokens: {
      syncToApi: token(),
      appsetToApi: token(),
      apiToRepo: token(),
      syncToRepo: token(),
      appsetToRepo: token(),
      apiToAppset: token(),
      apiToSync: token(),
    },
    gitPassword: token(),
    webhookSecret: token(),
    dexClientSecret: token(),
    ssoPassword: randomBytes(12).toString('base64url'),
    natsPasswords: generatePasswords(demoBusUsers().map((u) => u.user)),
  };
}

/** The bus users of the demo installation: its services, its external sources, and admin. */
export function demoBusUsers() {
  return busUsers({ namespace: installation.busNamespace, extSources, admin: true });
}

function isComplete(s: Partial<StackSecrets>): s is StackSecrets {
  const fresh = generate();
  return (
    Object.keys(fresh).every((k) => k in s) &&
    Object.keys(fresh.tokens).every(
      (k) => typeof s.tokens?.[k as keyof StackSecrets['tokens']] === 'string',
    ) &&
    Object.keys(fresh.natsPasswords).every((u) => typeof s.natsPasswords?.[u] === 'string')
  );
}

/** The secrets of the previous run when the file is there and whole, else new ones (written at once). */
export function loadOrCreateSecrets(): { secrets: StackSecrets; reused: boolean } {
  if (existsSync(paths.secrets)) {
    try {
      const parsed = JSON.parse(readFileSync(paths.secrets, 'utf8')) as Partial<StackSecrets>;
      if (isComplete(parsed)) {
        chmodSync(paths.secrets, 0o600);
        return { secrets: parsed, reused: true };
      }
    } catch {
      // unreadable or not JSON: replaced below
    }
  }
  const secrets = generate();
  writeFileSync(paths.secrets, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  chmodSync(paths.secrets, 0o600);
  return { secrets, reused: false };
}
