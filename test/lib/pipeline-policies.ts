/**
 * The pipeline setup of docs/deploying.md as it is written: the policies in docs/pipeline/, filled in by the
 * guide's own one-line `fill` shell function, for two stages in two accounts.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PolicyDocument } from './bootstrap.ts';
import { repoRoot } from './cdk.ts';

export const region = 'eu-west-1';
export const repository = 'acme/store-orders';
export const accounts = { staging: '111111111111', production: '222222222222' } as const;
export type Stage = keyof typeof accounts;

const readme = readFileSync(join(repoRoot, 'docs/deploying.md'), 'utf8');

/** The deploy guide's `fill` (a one-line shell function), run by bash on one of the docs/pipeline policies. */
export const fill = (file: string, stage: Stage): PolicyDocument => {
  const definition = /^ *(fill\(\) \{.*\})$/m.exec(readme)?.[1];
  if (definition === undefined) throw new Error('docs/deploying.md defines no one-line fill() { … } for the pipeline policies');
  const env = { ...process.env, STAGE: stage, ACCOUNT: accounts[stage], REGION: region, REPO: repository };
  return JSON.parse(
    execFileSync('bash', ['-c', `${definition}\nfill "$1"`, 'fill', `docs/pipeline/${file}`], { cwd: repoRoot, env, encoding: 'utf8' }),
  );
};
export const permissionsPolicy = (stage: Stage) => fill('deploy-role-permissions-policy.json', stage);
export const trustPolicy = (stage: Stage) => fill('deploy-role-trust-policy.json', stage);
/** The role each stage's GitHub environment assumes (AWS_DEPLOY_ROLE_ARN), in that stage's account. */
export const pipelineRole = (stage: Stage) => `arn:aws:iam::${accounts[stage]}:role/store-orders-deploy-${stage}`;
