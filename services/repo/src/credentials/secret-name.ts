// Credential names follow Argo CD's imperative secret naming (util/db RepoURLToSecretName):
// `repo-` + the FNV-1a 32-bit hash of the URL bytes followed by the project bytes, in decimal.
// The URL is hashed exactly as given (no normalisation), as Argo CD does, so a URL and project
// always give the same name in both systems and declarative secrets round-trip.

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a, 32-bit, over the UTF-8 bytes of the inputs in order. */
export function fnv1a32(...parts: string[]): number {
  let hash = FNV32_OFFSET;
  for (const part of parts) {
    for (const byte of Buffer.from(part, 'utf8')) {
      hash ^= byte;
      hash = Math.imul(hash, FNV32_PRIME) >>> 0;
    }
  }
  return hash >>> 0;
}

/** `repo-<fnv-1a 32-bit of url followed by project>`; an unscoped credential has project ''. */
export function credentialSecretName(url: string, project: string): string {
  return `repo-${fnv1a32(url, project)}`;
}
