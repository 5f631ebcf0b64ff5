// A real browser for the web UI's stories: Debian's chromium (test/scripts/obtain-chromium.sh)
// driven by playwright-core, with axe-core's accessibility check of the page as it is now and
// screenshots for docs/ui.md.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CAPSTAN_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** axe-core's serious and critical violations on the page (WCAG 2 A/AA rules). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated in the page (strings: this package is typed for Node, not the DOM).
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.addScriptTag({ content: axeSource });
  const result = await page.evaluate<{ violations: AxeViolation[] }>(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'best-practice'] } })",
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })),
    }));
}
