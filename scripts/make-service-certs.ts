// Makes the internal PKI of an installation with openssl: a CA and a certificate per service
// (SAN URI spiffe://capstan/<service>), keys mode 600. Usage:
//   npx tsx scripts/make-service-certs.ts <dir> [--dns <extra name>]...
// An existing CA in <dir> is kept and signs the services that are missing.
import { makeServicePki } from '@capstan/test/infra';

const [dir, ...rest] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: make-service-certs.ts <dir> [--dns <name>]...\n');
  process.exit(2);
}
const extraDnsNames = rest.flatMap((a, i) => (rest[i - 1] === '--dns' ? [a] : []));
const pki = await makeServicePki(dir, ['api', 'repo', 'sync', 'appset'], { extraDnsNames });
process.stdout.write(`CA: ${pki.caFile}\n`);
for (const [s, f] of Object.entries(pki.services)) process.stdout.write(`${s}: ${f.certFile} ${f.keyFile}\n`);
