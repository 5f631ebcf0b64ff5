// Where the repo service may connect. Tenants choose repository URLs, so a URL naming the loopback
// interface, a link-local address (cloud metadata at 169.254.169.254) or a network the operator
// denies must not become a request made from inside the control plane (server-side request
// forgery). The host is resolved once, every address it resolves to is checked, and git over
// HTTP(S) is pinned to the checked addresses (http.curloptResolve) and follows no redirect, so
// neither a DNS answer that changes between check and connect (rebinding) nor a redirect can take
// it elsewhere. SSH has no such pin: its host is checked when the fetch starts (documented).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { repoEndpoint, type RepoEndpoint } from '@capstan/policy';
import { ValidationError } from '@capstan/service';
import { EgressDeniedError, RepositoryUnavailableError } from './git-errors.js';

/**
 * Denied unless the operator allows them: this host (loopback, unspecified), link-local (cloud
 * metadata services), multicast and broadcast, IPv6 unique-local metadata (AWS fd00:ec2::254).
 * Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) are where in-house git servers live:
 * operators who want tenants kept off them add them to egress.denied-networks.
 */
export const DEFAULT_DENIED_NETWORKS = [
  '0.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '255.255.255.255/32',
  '::/128',
  '::1/128',
  'fe80::/10',
  'ff00::/8',
  'fd00:ec2::254/128',
].join(',');

export interface EgressPolicy {
  denied: BlockList;
  allowed: BlockList;
}

/** Parses comma-separated addresses and CIDRs (`10.0.0.0/8`, `::1`); names the setting on error. */
function networkList(list: string, setting: string): BlockList {
  const blocks = new BlockList();
  for (const entry of list
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const maxBits = family === 6 ? 128 : 32;
    if (!family || (bits !== undefined && (!Number.isInteger(bits) || bits < 0 || bits > maxBits))) {
      throw new ValidationError([
        { field: setting, description: `"${entry}" is not an IP address or CIDR (e.g. 10.0.0.0/8)` },
      ]);
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) blocks.addAddress(address, type);
    else blocks.addSubnet(address, bits, type);
  }
  return blocks;
}

export function egressPolicy(opts: { denied: string; allowed: string }): EgressPolicy {
  return {
    denied: networkList(opts.denied, 'egress.denied-networks'),
    allowed: networkList(opts.allowed, 'egress.allowed-networks'),
  };
}

/** Whether the repo service may connect to `address` (an allowed entry wins over a denied one). */
export function addressAllowed(policy: EgressPolicy, address: string): boolean {
  const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return policy.allowed.check(address, type) || !policy.denied.check(address, type);
}

/**
 * Resolves the host of `url` and checks every address; returns git configuration that pins
 * HTTP(S) to those addresses. Throws EgressDeniedError naming the host (never the address list
 * of an internal network in full: the first refused address is enough to act on).
 */
export async function checkEgress(policy: EgressPolicy, url: string, what: string): Promise<string[]> {
  const endpoint = repoEndpoint(url);
  if (!endpoint) return [];
  const addresses = await checkedAddresses(policy, endpoint.host, what);
  if (endpoint.transport === 'ssh') return [];
  const pinned = addresses.map((a) => (isIP(a) === 6 ? `[${a}]` : a)).join(',');
  return [
    '-c',
    `http.curloptResolve=${endpoint.host}:${endpoint.port}:${pinned}`,
    '-c',
    'http.followRedirects=false',
  ];
}

/**
 * Every address `host` resolves to, once each is allowed; EgressDeniedError names the host and the
 * first refused address. Helm's connections go through a proxy that asks this for each one
 * (charts/egress-proxy.ts).
 */
export async function checkedAddresses(policy: EgressPolicy, host: string, what: string): Promise<string[]> {
  const addresses = await resolve({ host }, what);
  const refused = addresses.find((a) => !addressAllowed(policy, a));
  if (refused !== undefined) {
    throw new EgressDeniedError(
      `${what}: host ${host} resolves to ${refused}, a network the repo service may not reach (egress.denied-networks)`,
    );
  }
  return addresses;
}

async function resolve(endpoint: Pick<RepoEndpoint, 'host'>, what: string): Promise<string[]> {
  if (isIP(endpoint.host)) return [endpoint.host];
  try {
    const answers = await lookup(endpoint.host, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  } catch (err) {
    throw new RepositoryUnavailableError(`${what}: cannot resolve host ${endpoint.host}`, { cause: err });
  }
}
