/**
 * What the probes' roles (the pre-traffic hook's and the synthetic client's) may do to the orders
 * table and CloudWatch, evaluated by the IAM simulator (test/lib/iam.ts) against the synthesized
 * templates: their own orders in the reserved ids (shared/probes.ts), with a probe order's
 * attributes only, and ProbeBusy in the service's namespace; nothing else, on no other item.
 */
import type { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { stages, type StageName } from '../../infra/stage-config.ts';
import { idThatCannotExist, probeOrderAttributes, probeOrderId, probeSlots } from '../../shared/probes.ts';
import {
  type Call,
  type CfnTemplate,
  evaluate,
  evaluationAccount,
  evaluationRegion,
  referencedId,
  resolveTemplate,
  resourcesOfType,
  roleIdentityPolicies,
  roleSession,
} from '../lib/iam.ts';
import { logicalId, stageNames, sharedApp } from '../lib/cdk.ts';

const { app, stack } = sharedApp();
const templateOf = (s: Stack) => app.synth().getStackByName(s.stackName).template as CfnTemplate;
const tableArn = (name: string) => `arn:aws:dynamodb:${evaluationRegion}:${evaluationAccount}:table/${name}`;

/** A request on one item: its key's text, the attributes it names, and what it asks back. */
const itemCall = (action: string, table: string, id: string | undefined, attributes: readonly string[], returnValues?: string) => ({
  action: `dynamodb:${action}`,
  resource: tableArn(table),
  context: {
    ...(id === undefined ? {} : { 'dynamodb:LeadingKeys': [id] }),
    ...(attributes.length === 0 ? {} : { 'dynamodb:Attributes': [...attributes] }),
    ...(returnValues === undefined ? {} : { 'dynamodb:ReturnValues': returnValues }),
  },
});

/** What a probe writes and reads (shared/probe-writes.ts), attribute by attribute. */
const put = ['id', 'status', 'probe', 'probeExpiresAt'];
const read = ['status', 'cancelledAt'];

describe.each(stageNames)("the probes' access on %s, evaluated", (stage: StageName) => {
  const s = stack(stage);
  const template = templateOf(s);
  const resolve = resolveTemplate(template, s.stackName);
  const own = stages[stage].ordersTableName;
  const other = stages[stageNames.find((name) => name !== stage)!].ordersTableName;
  const canary = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::Synthetics::Canary')!;
  // Each role with its own probe slots and the other's, which it may not touch.
  const roles = {
    'pre-traffic hook': {
      roleId: logicalId(s, s.preTrafficHook.role),
      slots: probeSlots.preTrafficHook,
      others: probeSlots.syntheticClient,
    },
    'synthetic client': {
      roleId: referencedId(canary.Properties?.ExecutionRoleArn)!,
      slots: probeSlots.syntheticClient,
      others: probeSlots.preTrafficHook,
    },
  };

  describe.each(Object.entries(roles))('the %s', (_name, { roleId, slots, others: othersSlots }) => {
    const principal = roleSession(String(resolve({ 'Fn::GetAtt': [roleId, 'Arn'] })));
    const identityPolicies = roleIdentityPolicies(template, roleId, resolve);
    const verdict = (call: Omit<Call, 'principal' | 'identityPolicies'>) => evaluate({ principal, identityPolicies, ...call });

    it('may write, read back and delete a pending order of its own in each of its slots', async () => {
      for (const id of [slots[0]!, slots.at(-1)!].map(probeOrderId)) {
        expect(await verdict(itemCall('PutItem', own, id, put)), `PutItem ${id}`).toBe('Allowed');
        expect(await verdict(itemCall('GetItem', own, id, read)), `GetItem ${id}`).toBe('Allowed');
        expect(await verdict(itemCall('DeleteItem', own, id, ['probe'])), `DeleteItem ${id}`).toBe('Allowed');
        expect(await verdict(itemCall('DeleteItem', own, id, [])), `DeleteItem ${id} by key alone`).toBe('Allowed');
      }
    });

    it("may touch no other order: a client's, int64's extremes, ids beside the range, or the other stage's table", async () => {
      const others = [
        '1',
        '9223372036854775807',
        idThatCannotExist,
        '-9223372036854775800',
        '-9223372036854775699',
        // The range's text with a digit more or less, and with something after it.
        '-922337203685477570',
        '-922337203685477570000',
        `${probeOrderId(slots[0]!)}1`,
        // Other spellings of client orders that DynamoDB reads as the same Number key (measured on
        // DynamoDB Local): -92233720368547757, -922337203685477570, -9223372036854775700.
        '-92233720368547757e0',
        '-92233720368547757E1',
        '-92233720368547757E2',
        '-92233720368547757.5',
        '-92233720368547757.0',
        '-92233720368547757+0',
        // The other probe's slots: neither probe can touch the other's order.
        ...[othersSlots[0]!, othersSlots.at(-1)!].map(probeOrderId),
        // Probe ids in other spellings: the exact texts alone are the probes'.
        `${probeOrderId(slots[0]!)}.0`,
        `${probeOrderId(slots[0]!)}e0`,
        probeOrderId(slots[0]!).replace('-', '-0'),
      ];
      for (const id of others)
        for (const action of ['PutItem', 'GetItem', 'DeleteItem'])
          expect(await verdict(itemCall(action, own, id, action === 'PutItem' ? put : [])), `${action} ${id}`).not.toBe('Allowed');
      for (const action of ['PutItem', 'GetItem', 'DeleteItem'])
        expect(await verdict(itemCall(action, other, probeOrderId(slots[0]!), [])), `${action} on ${other}`).not.toBe('Allowed');
      // A request that names no partition key is refused, though ForAllValues alone would let it pass.
      expect(await verdict(itemCall('PutItem', own, undefined, put))).not.toBe('Allowed');
    });

    it('may write no attribute but a probe order’s, ask no old item back, and use no other action on the table', async () => {
      expect([...probeOrderAttributes].sort()).toEqual([...new Set([...put, ...read, 'probe'])].sort());
      const id = probeOrderId(slots[0]!);
      for (const extra of ['petId', 'quantity', 'shipDate', 'complete'])
        expect(await verdict(itemCall('PutItem', own, id, [...put, extra])), `PutItem with ${extra}`).not.toBe('Allowed');
      expect(await verdict(itemCall('PutItem', own, id, put, 'ALL_OLD'))).not.toBe('Allowed');
      expect(await verdict(itemCall('DeleteItem', own, id, [], 'ALL_OLD'))).not.toBe('Allowed');
      expect(await verdict(itemCall('UpdateItem', own, id, ['status']))).not.toBe('Allowed');
      for (const action of ['BatchWriteItem', 'BatchGetItem', 'Scan', 'Query', 'DeleteTable'])
        expect(await verdict({ action: `dynamodb:${action}`, resource: tableArn(own) }), action).not.toBe('Allowed');
    });

    it('keeps its inline policies within IAM’s 10,240 characters per role, the reserved ids written out', async () => {
      // IAM counts no whitespace, over every inline policy of the role (the role's Policies and each
      // AWS::IAM::Policy attached to it); ARNs resolved as in the account (reference_iam-quotas.html).
      const role = template.Resources[roleId]!;
      const inline = [
        ...((role.Properties?.Policies ?? []) as { PolicyDocument: unknown }[]).map(({ PolicyDocument }) => PolicyDocument),
        ...resourcesOfType(template, 'AWS::IAM::Policy')
          .filter(([, policy]) => ((policy.Properties?.Roles ?? []) as unknown[]).some((entry) => referencedId(entry) === roleId))
          .map(([, policy]) => policy.Properties?.PolicyDocument),
      ];
      const characters = inline.reduce((sum: number, document) => sum + JSON.stringify(resolve(document)).length, 0);
      expect(JSON.stringify(inline)).toContain(JSON.stringify(probeOrderId(slots.at(-1)!)));
      expect(characters).toBeLessThan(10_240);
    });

    it('may publish metrics only in the probes’ own namespace (ProbeBusy), not in the one the guards read', async () => {
      const metrics = (namespace: string) => ({
        action: 'cloudwatch:PutMetricData',
        resource: '*',
        context: { 'cloudwatch:namespace': namespace },
      });
      expect(await verdict(metrics('StoreOrders/Probes'))).toBe('Allowed');
      // Never the functions' own namespace, whose metrics the guards read: a probe cannot forge one.
      expect(await verdict(metrics('StoreOrders'))).not.toBe('Allowed');
      expect(await verdict(metrics('AWS/Lambda'))).not.toBe('Allowed');
      expect(await verdict(metrics('SomeoneElse'))).not.toBe('Allowed');
    });
  });
});
