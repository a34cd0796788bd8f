import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The README and every page of docs/ (the decision records in docs/decisions/ included), as repository paths: what a reader reads and pastes from. */
export const docPages = (repoRoot: string): string[] => [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
    .sort(),
];
