/**
 * Security rules for GitHub Actions workflows, beyond actionlint's syntax and expression checks:
 * what keeps a workflow from handing credentials to code nobody pinned or reviewed. zizmor, the
 * maintained linter for this, is not on the npm registry (PyPI and crates.io only): CI runs it
 * too (test/infra/workflow.test.ts), and these rules run everywhere `npm test` does.
 */
import { parseDocument } from 'yaml';

type Step = { uses?: string; run?: string; with?: Record<string, unknown> };
type Job = { permissions?: unknown; environment?: unknown; steps?: Step[] };
type Workflow = { on?: unknown; permissions?: unknown; jobs?: Record<string, Job> };

/** Triggers that run with the base repository's secrets and token on code from a fork. */
const privilegedTriggers = ['pull_request_target', 'workflow_run'];
/** `owner/repo[/path]@<40 hex>`: a commit cannot be moved, a tag or branch can. */
const pinned = /^[\w.-]+\/[\w.-]+(\/[^@]*)?@[0-9a-f]{40}$/;

/** The trigger names, whichever form `on:` takes (a name, a list or a map). */
const triggers = (on: unknown): string[] =>
  typeof on === 'string' ? [on] : Array.isArray(on) ? on.map(String) : Object.keys((on as object | null) ?? {});

/** Every finding in one workflow's text, as "where: what" lines; none means it passes. */
export const workflowFindings = (text: string): string[] => {
  const findings: string[] = [];
  const workflow = parseDocument(text).toJS() as Workflow;
  for (const trigger of triggers(workflow.on).filter((name) => privilegedTriggers.includes(name)))
    findings.push(`on: ${trigger} runs fork code with the repository's secrets`);
  if (workflow.permissions === undefined) findings.push('permissions: missing at the top (the default token may write)');
  for (const [name, job] of Object.entries(workflow.jobs ?? {})) {
    findings.push(...jobFindings(`jobs.${name}`, job));
  }
  findings.push(...pinComments(text));
  return findings;
};

const jobFindings = (where: string, job: Job): string[] => {
  const findings: string[] = [];
  const permissions = job.permissions;
  if (permissions === undefined) findings.push(`${where}: no permissions of its own`);
  if (typeof permissions === 'string') findings.push(`${where}: permissions "${permissions}" instead of a list of what it needs`);
  const mayGetCredentials = typeof permissions === 'object' && permissions !== null && 'id-token' in permissions;
  for (const [index, step] of (job.steps ?? []).entries()) {
    const at = `${where}.steps[${index}]`;
    if (step.uses !== undefined && !step.uses.startsWith('./') && !step.uses.startsWith('docker://') && !pinned.test(step.uses))
      findings.push(`${at}: ${step.uses} is not pinned to a full commit SHA`);
    if (step.uses?.startsWith('docker://') === true && !/@sha256:[0-9a-f]{64}$/.test(step.uses))
      findings.push(`${at}: ${step.uses} is not pinned to an image digest`);
    if (step.uses?.startsWith('actions/checkout@') === true && step.with?.['persist-credentials'] !== false)
      findings.push(`${at}: checkout leaves the token in .git (set persist-credentials: false)`);
    if (step.run?.includes('${{') === true)
      findings.push(`${at}: an expression inside run: (pass it through env: so the shell never parses it)`);
    if (mayGetCredentials && step.run !== undefined && /\bnpm (ci|install|i)\b(?![^\n]*--ignore-scripts)/.test(step.run))
      findings.push(`${at}: npm runs install scripts in a job that can request an id token`);
    if (mayGetCredentials && step.with?.cache !== undefined) findings.push(`${at}: a cache restored in a job that can request an id token`);
    if (step.run !== undefined && /\$\{\{\s*secrets\./.test(step.run)) findings.push(`${at}: a secret inside run:`);
  }
  const secretsUsed = JSON.stringify(job.steps ?? []).includes('secrets.');
  if (secretsUsed && job.environment === undefined)
    findings.push(`${where}: reads secrets without an environment (a repository secret reaches every job)`);
  return findings;
};

/** Each pinned `uses:` line says which version its SHA is (`# v1.2.3`), so a reviewer and Dependabot can read it. */
const pinComments = (text: string): string[] =>
  text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => /^\s*(-\s*)?uses:\s*[^\s#]+@[0-9a-f]{40}\b/.test(line) && !/#\s*v\d+(\.\d+){0,2}\s*$/.test(line))
    .map(({ number }) => `line ${number}: a SHA pin without its version in a comment (# vX.Y.Z)`);
