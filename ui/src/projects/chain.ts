// A project's parent chain (spec.parentProject, nearest parent first), read link by link; bounded so
// that a cycle or a very deep chain cannot keep the page asking.
export interface Project {
  metadata: { name: string; resourceVersion?: string };
  spec: {
    description?: string;
    parentProject?: string;
    sourceRepos?: string[];
    destinations?: { server?: string; name?: string; namespace?: string }[];
    destinationServiceAccounts?: { server?: string; namespace?: string; defaultServiceAccount?: string }[];
    clusterResourceWhitelist?: { group?: string; kind?: string }[];
  };
}

export const MAX_CHAIN = 16;

export type Link = { name: string; project?: Project; error?: Error };

/** The project then its parents up to the root; a link that cannot be read ends the chain there. */
export async function readChain(name: string, get: (name: string) => Promise<Project>): Promise<Link[]> {
  const out: Link[] = [];
  const seen = new Set<string>();
  let next: string | undefined = name;
  while (next && out.length < MAX_CHAIN && !seen.has(next)) {
    const current: string = next;
    seen.add(current);
    try {
      const project = await get(current);
      out.push({ name: current, project });
      next = project.spec.parentProject || undefined;
    } catch (error) {
      out.push({ name: current, error: error as Error });
      next = undefined;
    }
  }
  return out;
}
