import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll } from 'vitest';
import { createApp } from '../../infra/cdk/app.ts';
import type { Registry } from '../../infra/registry.ts';
import { type StageName, stages } from '../../infra/stage-config.ts';
import type { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';

export const repoRoot = resolve(import.meta.dirname, '../..');

/** The feature flags of cdk.json, so the tests build the same templates `cdk synth` does. */
export const cdkJsonContext = (): Record<string, unknown> => JSON.parse(readFileSync(join(repoRoot, 'cdk.json'), 'utf8')).context;

/** A temporary directory removed after the test file. */
export const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

type SynthOptions = { bundle?: string[]; context?: Record<string, unknown>; controlTower?: boolean; registry?: Registry };

const buildApp = (outdir: string, options: SynthOptions) => {
  const app: App = createApp(
    { outdir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': options.bundle ?? [], ...options.context } },
    undefined,
    { controlTower: options.controlTower ?? false, ...(options.registry === undefined ? {} : { registry: options.registry }) },
  );
  const stack = (stage: StageName) => app.node.findChild(stages[stage].stackName) as StoreOrdersStack;
  const templates = new Map<StageName, Template>();
  // Template.fromStack walks the whole app each time: one Template per stage is enough, as the app does not change.
  const template = (stage: StageName): Template => {
    const known = templates.get(stage) ?? Template.fromStack(stack(stage));
    templates.set(stage, known);
    return known;
  };
  return { app, outdir, stack, template };
};

/**
 * The app as `cdk synth` builds it (cdk-nag included), environment-agnostic. Bundling is
 * skipped unless `bundle` names the stacks to bundle: one test bundles for real. The Control
 * Tower check runs only when asked (`controlTower`): it adds ~9 s to every synth. A fresh app
 * each call: for a test that changes the configuration first.
 */
export const synthApp = (options: SynthOptions = {}) => buildApp(tempDir('store-orders-cdk-'), options);

let shared: ReturnType<typeof buildApp> | undefined;

/**
 * `synthApp()` built once per test worker and shared by the files it runs (the infra group runs
 * unisolated for this: a synth is most of an infra file's time). Read it, never change it.
 */
export const sharedApp = (): ReturnType<typeof buildApp> => {
  if (shared === undefined) {
    const outdir = mkdtempSync(join(tmpdir(), 'store-orders-cdk-shared-'));
    process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
    shared = buildApp(outdir, {});
  }
  return shared;
};

export const stageNames = Object.keys(stages) as StageName[];

/** The logical id CloudFormation knows a construct's resource by. */
export const logicalId = (stack: Stack, construct: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);

type CfnResource = { Type: string; Properties?: Record<string, unknown> };

/** "GET /v1/store/orders" → the method's properties, from the resource tree of the template. */
export const methodsByRoute = (template: Template): Map<string, Record<string, unknown>> => {
  const resources = template.toJSON().Resources as Record<string, CfnResource>;
  const pathOf = (logical: string): string => {
    const properties = resources[logical]?.Properties ?? {};
    const parent = properties.ParentId as { Ref?: string } | undefined;
    const prefix = parent?.Ref === undefined ? '' : pathOf(parent.Ref);
    return `${prefix}/${properties.PathPart as string}`;
  };
  const methods = new Map<string, Record<string, unknown>>();
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::ApiGateway::Method') continue;
    const properties = resource.Properties ?? {};
    const resourceId = properties.ResourceId as { Ref?: string };
    const path = resourceId.Ref === undefined ? '/' : pathOf(resourceId.Ref);
    methods.set(`${properties.HttpMethod as string} ${path}`, properties);
  }
  return methods;
};

/** Every action of every statement of the policies attached to a role. */
export const roleActions = (template: Template, roleLogicalId: string): string[] => {
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleLogicalId }] } });
  return Object.values(policies)
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
    .flatMap((statement) => [statement.Action].flat())
    .sort();
};
