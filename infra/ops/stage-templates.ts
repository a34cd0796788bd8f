/**
 * The templates a deploy of a stage would send, for the deploy preflight (./deploy-preflight.ts)
 * and the import mapping (./import-mapping.ts): read from a cloud assembly (`--app <dir>`, the
 * pipeline's downloaded cdk.out or an older release's synth), or synthesized in memory from this
 * checkout as `cdk synth` would (cdk.json's context, bundling and policy checks skipped: a few
 * seconds), and the stage's stacks as CloudFormation holds them now.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import type { StageConfig } from '../stage-config.ts';
import { accountStackName, budgetStackName } from '../names.ts';

export type CfnResource = {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly Metadata?: Record<string, unknown>;
};
export type CfnTemplate = { readonly Resources?: Record<string, CfnResource> };

/** The stacks a stage's preflight reads: the stage's own, the account stack it depends on, and the stage's budget stack. */
export const stacksOfStage = (config: Pick<StageConfig, 'stage' | 'stackName'>): string[] => [
  config.stackName,
  accountStackName,
  budgetStackName(config.stage),
];

const repoRoot = join(import.meta.dirname, '../..');

/** cdk.json's context: the feature flags `cdk synth` builds the app with. */
export const cdkJsonContext = (): Record<string, unknown> => JSON.parse(readFileSync(join(repoRoot, 'cdk.json'), 'utf8')).context ?? {};

type Manifest = { artifacts?: Record<string, { type: string; properties?: { templateFile?: string; stackName?: string } }> };

/** Every stack template of a cloud assembly directory, by stack name (manifest.json names each one's file). */
export const assemblyTemplates = (dir: string): Map<string, CfnTemplate> => {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  const templates = new Map<string, CfnTemplate>();
  for (const [id, artifact] of Object.entries(manifest.artifacts ?? {})) {
    if (artifact.type !== 'aws:cloudformation:stack' || artifact.properties?.templateFile === undefined) continue;
    templates.set(artifact.properties.stackName ?? id, JSON.parse(readFileSync(join(dir, artifact.properties.templateFile), 'utf8')));
  }
  return templates;
};

const synthesized = new Map<string, Map<string, CfnTemplate>>();

/**
 * The app synthesized in memory from this checkout, once per process and context (the CDK loads
 * here, not with the preflight). `context` is what `cdk deploy -c` would add (`firstDeploy`).
 */
const synthesizeHere = async (context: Record<string, string>): Promise<Map<string, CfnTemplate>> => {
  const key = JSON.stringify(context);
  const known = synthesized.get(key);
  if (known !== undefined) return known;
  const { createApp } = await import('../cdk/app.ts');
  const outdir = mkdtempSync(join(tmpdir(), 'store-orders-preflight-'));
  try {
    // As `cdk synth` runs it: cdk.json's context, and the construct paths the CLI asks for (the checks name resources by them).
    const appContext = { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true, ...context };
    createApp({ outdir, context: appContext }, undefined, { controlTower: false, checks: false }).synth();
    const templates = assemblyTemplates(outdir);
    synthesized.set(key, templates);
    return templates;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
};

/**
 * The templates a deploy would send: those of `app` (a cloud assembly directory) when given, else
 * this checkout's, with the context the deploy adds (`-c firstDeploy=true` for a stack's create).
 */
export const deployTemplates = async (app?: string, context: Record<string, string> = {}): Promise<Map<string, CfnTemplate>> =>
  app === undefined ? synthesizeHere(context) : assemblyTemplates(app);

/** A resource of a deployed stack: its type and its physical id (a table's name, a topic's ARN). */
export type DeployedResource = { readonly type: string; readonly physicalId: string | undefined };

const isMissingStack = (error: unknown) =>
  (error as { name?: string }).name === 'ValidationError' && /does not exist/.test(String((error as Error).message));

const gone = new Set(['DELETE_COMPLETE', 'DELETE_SKIPPED']);

/** The resources of a deployed stack by logical id, every page; undefined when the stack does not exist. */
export const deployedResources = async (
  cloudFormation: CloudFormationClient,
  stackName: string,
): Promise<Map<string, DeployedResource> | undefined> => {
  const resources = new Map<string, DeployedResource>();
  let NextToken: string | undefined;
  try {
    do {
      const page = await cloudFormation.send(new ListStackResourcesCommand({ StackName: stackName, ...(NextToken ? { NextToken } : {}) }));
      for (const summary of page.StackResourceSummaries ?? [])
        // A resource a rolled-back create deleted, or left behind (DELETE_SKIPPED), is the stack's no more.
        if (summary.LogicalResourceId !== undefined && !gone.has(summary.ResourceStatus ?? ''))
          resources.set(summary.LogicalResourceId, { type: summary.ResourceType ?? '', physicalId: summary.PhysicalResourceId });
      NextToken = page.NextToken;
    } while (NextToken);
  } catch (error) {
    if (isMissingStack(error)) return undefined;
    throw error;
  }
  return resources;
};

/**
 * The template CloudFormation last deployed for a stack (GetTemplate, the original JSON the CDK
 * sent): what a deploy compares its properties with, so what it will change.
 */
export const recordedTemplate = async (cloudFormation: CloudFormationClient, stackName: string): Promise<CfnTemplate> => {
  const { TemplateBody } = await cloudFormation.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }));
  return JSON.parse(TemplateBody ?? '{}') as CfnTemplate;
};

/** A resource's construct path (its `aws:cdk:path` metadata, without the trailing `/Resource`), else its logical id. */
export const resourceLabel = (logicalId: string, resource: CfnResource): string =>
  String(resource.Metadata?.['aws:cdk:path'] ?? logicalId).replace(/\/Resource$/, '');
