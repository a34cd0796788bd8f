/**
 * What docs/deploying.md's first deploy tells a reader to do with the stacks' outputs, against the
 * synthesized stacks: the outputs it names are the stage stack's, and the topics it subscribes are
 * every topic a stack offers as an output, so that the preflight's alarm-delivery check (a confirmed
 * subscription on every topic) passes after the walkthrough as written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { repoRoot, sharedApp, stageNames } from '../lib/cdk.ts';

const guide = readFileSync(join(repoRoot, 'docs/deploying.md'), 'utf8');
const { app } = sharedApp();

/** A stack of the app by its name, as a template. */
const templateOf = (stackName: string): Template => {
  const stack = app.node.children.find((child): child is Stack => Stack.isStack(child) && child.stackName === stackName);
  if (stack === undefined) throw new Error(`no stack ${stackName}`);
  return Template.fromStack(stack);
};

/** The outputs of a stack whose value is one of its SNS topics. */
const topicOutputs = (template: Template): string[] => {
  const topics = new Set(Object.keys(template.findResources('AWS::SNS::Topic')));
  return Object.entries(template.findOutputs('*'))
    .filter(([, output]) => topics.has((output.Value as { Ref?: string }).Ref ?? ''))
    .map(([name]) => name)
    .sort();
};

/** `subscribe <stack> <output> …` lines of the guide's shell blocks: the pairs it subscribes. */
export const subscribed = (markdown: string): string[] =>
  [...markdown.matchAll(/^subscribe (\S+) (\w+) /gm)].map(([, stack, output]) => `${stack} ${output}`);

describe('docs/deploying.md, the first deploy', () => {
  it.each(stageNames)("names the %s stack's outputs as the stack has them (a custom domain's and CDK's own aside)", (stage) => {
    const sentence = /^The stack's outputs are ([^:]+):/m.exec(guide)?.[1] ?? '';
    const documented = [...sentence.matchAll(/`(\w+)`/g)].map(([, name]) => name!).sort();
    const outputs = Object.keys(templateOf(`StoreOrders-${stage}`).findOutputs('*'))
      // A custom domain's two are named where the guide sets one up; the RestApi's own endpoint (a hashed id) is BaseUrl's stage root.
      .filter((name) => !name.startsWith('CustomDomain') && !/[0-9A-F]{8}$/.test(name))
      .sort();
    expect(documented).toEqual(outputs);
  });

  it.each(stageNames)('subscribes someone to every topic the %s stack and its budget stack offer', (stage) => {
    const budget = `StoreOrders-budget-${stage}`;
    const expected = [
      ...topicOutputs(templateOf(`StoreOrders-${stage}`)).map((output) => `StoreOrders-${stage} ${output}`),
      ...topicOutputs(templateOf(budget)).map((output) => `${budget} ${output}`),
    ];
    expect(expected.length).toBeGreaterThanOrEqual(3);
    const forStage = subscribed(guide).filter((pair) => pair.startsWith(`StoreOrders-${stage} `) || pair.startsWith(`${budget} `));
    expect(new Set(forStage)).toEqual(new Set(expected));
  });
});

describe('docs/deploying.md, the probes on a stage that has never run its hook', () => {
  it('runs the hook on demand on staging once its canary key is stored, before any command deploys production', () => {
    const at = (command: string) => {
      const index = guide.indexOf(command);
      expect(index, command).toBeGreaterThan(-1);
      return index;
    };
    const probes = at('npm run probes -- --stage staging');
    expect(probes).toBeGreaterThan(at('npm run keys -- canary --stage staging'));
    expect(probes).toBeLessThan(at('npx cdk deploy StoreOrders-production'));
    expect(at('npm run probes -- --stage production')).toBeGreaterThan(at('npm run keys -- canary --stage production'));
    const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.probes).toBe('node infra/ops/on-demand-probes.ts');
  });
});
