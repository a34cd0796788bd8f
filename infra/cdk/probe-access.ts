/**
 * What the service's probes may do beyond calling the API (the pre-traffic hook's role and the
 * synthetic client's, infra/cdk/release-checks.ts): write, read and delete orders of their own,
 * only in the ids shared/probes.ts reserves and only with the attributes a probe order has
 * (docs/api.md#orders-the-service-keeps-for-its-own-checks), and publish ProbeBusy in the service's
 * own namespace. test/infra/probe-access.test.ts evaluates both roles with the IAM simulator.
 */
import { Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { probeMetricsNamespace } from '../../shared/observability.ts';
import { probeOrderAttributes, probeOrderId } from '../../shared/probes.ts';

/** Which probe slots a role writes (shared/probes.ts probeSlots): each role only its own. */
type Slots = readonly number[];

/**
 * PutItem, GetItem and DeleteItem on the orders table, for the role's own reserved ids only, naming no
 * attribute but the probe order's, and returning no old item. Each id is written out as the probes
 * write it (`probeOrderId`), for `ForAllValues:StringEquals`: `dynamodb:LeadingKeys` is typed
 * ArrayOfString and AWS documents no case of a Number key, so a pattern would admit other spellings
 * of real orders (`-92233720368547757e0` is order -92233720368547757 to DynamoDB), while the exact
 * texts fail closed whether IAM compares the request's text or a normalised number (the first
 * staging deploy's hook proves the former: docs/deploying.md). `ForAllValues` holds for a request
 * that names no such key, so `Null` requires the partition key in every request (AWS's guidance
 * for multivalued keys); a request may name no attribute at all (a DeleteItem by key).
 */
const probeOrderStatement = (table: dynamodb.ITable, slots: Slots) =>
  new iam.PolicyStatement({
    actions: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:DeleteItem'],
    resources: [table.tableArn],
    conditions: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': slots.map(probeOrderId), 'dynamodb:Attributes': [...probeOrderAttributes] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      Null: { 'dynamodb:LeadingKeys': 'false' },
    },
  });

/** PutMetricData (no resource level: `*`), only into the service's own namespace. */
const probeBusyStatement = () =>
  new iam.PolicyStatement({
    actions: ['cloudwatch:PutMetricData'],
    resources: ['*'],
    conditions: { StringEquals: { 'cloudwatch:namespace': probeMetricsNamespace } },
  });

/**
 * Grants `role` the probes' writes in its own `slots` (the synthetic client's or the hooks', so
 * neither can touch the other's order); `acknowledgeWildcard`: the role has no cdk-nag
 * acknowledgement of `*` yet.
 */
export const grantProbeWrites = (
  role: iam.IRole,
  ordersTable: dynamodb.ITable,
  { slots, acknowledgeWildcard }: { slots: Slots; acknowledgeWildcard: boolean },
) => {
  role.addToPrincipalPolicy(probeOrderStatement(ordersTable, slots));
  role.addToPrincipalPolicy(probeBusyStatement());
  if (acknowledgeWildcard)
    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'cloudwatch:PutMetricData has no resource level: the statement is limited by condition to the StoreOrders/Probes namespace (the probes publish ProbeBusy).',
    });
};
