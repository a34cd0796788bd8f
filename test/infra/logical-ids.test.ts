import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { repoRoot, stageNames, sharedApp } from '../lib/cdk.ts';

/**
 * CloudFormation knows a resource by its logical id. A refactor that moves a table into
 * another construct changes its logical id, and CloudFormation then creates a new table and
 * removes the old one: with a fixed table name the deploy fails, and with a retained table the
 * data stays behind, orphaned, while the service starts on an empty table. The same holds for
 * log groups kept after deletion. These ids are therefore part of the deployed contract.
 */
const statefulResources = {
  OrdersTable315BB997: 'AWS::DynamoDB::Table',
  ApiKeysTable9F4DC7E7: 'AWS::DynamoDB::Table',
  AccessLogs8B620ECA: 'AWS::Logs::LogGroup',
  ExecutionLogs6FEE23C8: 'AWS::Logs::LogGroup',
  ListOrdersFunctionLogs33D32807: 'AWS::Logs::LogGroup',
  CancelOrderFunctionLogs283CC998: 'AWS::Logs::LogGroup',
  AuthorizerFunctionLogs4F627F6E: 'AWS::Logs::LogGroup',
};

/** The resources of each stage as released before the stacks were split into named parts (commit 1e13558). */
const released: Record<string, Record<string, string>> = JSON.parse(
  readFileSync(join(repoRoot, 'test/infra/released-resources.json'), 'utf8'),
);

/** Resources of that release that are gone on purpose, each with why. */
const retired: Record<string, string> = {
  ApiAccountA18C9B29: 'API Gateway account settings moved to StoreOrders-account: one owner per account and region',
  ApiCloudWatchRole73EC6FC4: 'the logging role moved with them (the old role is retained by CloudFormation, not deleted)',
  MonitoringApiLatencyP9963E4584E: 'the stage-wide p99 counted streamed lists until their last byte: CancelLatencyP99 and ListFirstByteP99',
};

/** Types CloudFormation replaces by design: a new API deployment per change; permissions now name the live alias. */
const replacedByDesign = new Set(['AWS::ApiGateway::Deployment', 'AWS::Lambda::Permission']);

describe.each(stageNames)('the %s stack, against what is deployed', (stage) => {
  const resources = sharedApp().template(stage).toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>;

  it.each(Object.entries(statefulResources))('keeps the logical id %s (%s), so CloudFormation never replaces it', (id, type) => {
    expect(resources[id]?.Type).toBe(type);
  });

  // Kept on every stack operation but the rolled-back one that created them (RetainExceptOnCreate).
  it('keeps the tables and, where the stage retains them, the log groups when the stack goes', () => {
    const retainLogs = stages[stage].logRemovalPolicy === 'retain';
    for (const [id, type] of Object.entries(statefulResources)) {
      const policy = resources[id]?.DeletionPolicy;
      if (type === 'AWS::DynamoDB::Table') expect(policy).toBe('RetainExceptOnCreate');
      else expect(policy).toBe(retainLogs ? 'RetainExceptOnCreate' : 'Delete');
    }
  });

  it('replaces no resource of the released stack, except those retired on purpose', () => {
    const replaced = Object.entries(released[stage] ?? {}).filter(
      ([id, type]) => resources[id]?.Type !== type && !(id in retired) && !replacedByDesign.has(type),
    );
    expect(replaced).toEqual([]);
    // A retirement that no longer applies is a stale excuse.
    for (const id of Object.keys(retired)) {
      expect(released[stage]).toHaveProperty(id);
      expect(resources[id]?.Type).not.toBe(released[stage]?.[id]);
    }
  });
});
