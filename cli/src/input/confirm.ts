// Confirmation before a destructive command, as argocd asks for it: a [y/n] question on a terminal
// ([y/n/A] when the command names several objects, A answering yes for all of them). Unlike argocd,
// which goes ahead when stdout is not a terminal, a command that cannot ask refuses unless --yes says
// so: a script that forgot --yes must not delete a tenant's Applications.
import { createInterface } from 'node:readline';
import { CliError } from '../errors.js';

export type Answer = 'yes' | 'no' | 'all';

/**
 * Whether to ask: false with --yes; true on a terminal (stdin, where the answer is read);
 * otherwise the command is refused with exit status 2, naming what it would have done.
 */
export function mustAsk(what: string, yes: boolean, interactive: boolean): boolean {
  if (yes) return false;
  if (interactive) return true;
  throw new CliError(`refusing to ${what} without confirmation: stdin is not a terminal (pass --yes)`, 2);
}

/** The answer to one line, or undefined when it is none of y, yes, n, no (a, all when allowed). */
export function parseAnswer(line: string, allowAll: boolean): Answer | undefined {
  const a = line.trim().toLowerCase();
  if (a === 'y' || a === 'yes') return 'yes';
  if (a === 'n' || a === 'no') return 'no';
  if (allowAll && (a === 'a' || a === 'all')) return 'all';
  return undefined;
}

/** Asks on stderr and reads stdin until the answer is one parseAnswer accepts (argocd's AskToProceedS). */
export async function askToProceed(question: string, allowAll: boolean): Promise<Answer> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const lines = rl[Symbol.asyncIterator]();
  try {
    for (;;) {
      process.stderr.write(question);
      const next = await lines.next();
      // stdin closed (Ctrl-D): no answer is no.
      if (next.done) return 'no';
      const answer = parseAnswer(next.value, allowAll);
      if (answer) return answer;
    }
  } finally {
    rl.close();
  }
}
