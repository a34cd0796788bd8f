import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * Runs a Node CLI from node_modules in the repository (where its config file is found) and parses
 * the JSON report it prints on stdout; `input` goes to its stdin. Fails when it prints no JSON.
 */
export const runJsonCli = <Report>(name: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
  new Promise<{ exitCode: number | null; report: Report; stderr: string }>((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('close', (exitCode) => {
      try {
        done({ exitCode, report: JSON.parse(stdout) as Report, stderr });
      } catch {
        fail(new Error(`${name} printed no JSON report (exit ${exitCode}): ${stdout}${stderr}`));
      }
    });
    child.stdin.end(options.input ?? '');
  });
