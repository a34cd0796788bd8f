import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from '../store-function.ts';

/** The service's runbook: the stage's own alarms point here, and each function's by default (its contract's `runbook`). */
export const serviceRunbook = 'docs/runbook.md';

const pages = new Map<string, string>();

/**
 * What an alarm's description says of its runbook: `Runbook: <page>, section "<alarm id>".`, once
 * the page has that section (a `### <alarm id>` heading). An alarm without one stops the synth
 * with a message that names both, so that no alarm pages on-call towards a section that is not there.
 */
export const runbookPointer = (alarmId: string, page: string = serviceRunbook): string => {
  let text = pages.get(page);
  if (text === undefined) {
    try {
      text = readFileSync(resolve(repoRoot, page), 'utf8');
    } catch {
      throw new Error(`alarm ${alarmId}: its runbook ${page} cannot be read`);
    }
    pages.set(page, text);
  }
  if (!new RegExp(`^### ${alarmId}$`, 'm').test(text))
    throw new Error(`alarm ${alarmId}: its runbook ${page} has no section "### ${alarmId}"`);
  return `Runbook: ${page}, section "${alarmId}".`;
};
