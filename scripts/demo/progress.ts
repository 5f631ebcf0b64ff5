// Progress lines of `npm run up` / `npm run down`: one numbered line per step, its duration when
// done, and indented detail lines below it.
// scripts/up.sh passes when it started, so the clock runs on across the hand-over.
const started = Number(process.env.CAPSTAN_UP_STARTED_MS) || Date.now();
let current: { title: string; at: number } | null = null;

/** The prefix of every line (the compose test's story sets its own). */
const label = process.env.CAPSTAN_PROGRESS_LABEL ?? 'capstan up';
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s`;

export function step(title: string): void {
  current = { title, at: Date.now() };
  process.stdout.write(`${label} ${elapsed()}  ▸ ${title}\n`);
}

export function detail(line: string): void {
  for (const l of line.split('\n')) process.stdout.write(`              ${l}\n`);
}

export function done(note = ''): void {
  if (!current) return;
  const ms = Date.now() - current.at;
  process.stdout.write(
    `${label} ${elapsed()}  ✓ ${current.title} (${(ms / 1000).toFixed(1)} s)${note ? ` ${note}` : ''}\n`,
  );
  current = null;
}

export function heading(title: string): void {
  process.stdout.write(`\n━━ ${title} ${'━'.repeat(Math.max(3, 96 - title.length))}\n`);
}
