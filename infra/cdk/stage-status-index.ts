import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { statusIndex } from '../../shared/status-index.ts';
import type { StageConfig } from '../stage-config.ts';

/**
 * The v2 list's status index on the orders table, when the stage config has it (ordersStatusIndex).
 * DynamoDB writes it with every order that has a string status: one more write per order write
 * (docs/decisions.md#v2-list-access-paths). Adding it to a table that holds orders is a backfill
 * that CloudFormation does not wait for and cannot roll back cleanly, so it is deployed alone:
 * switching the setting changes nothing else in the template (test/infra/status-index.test.ts,
 * docs/reference/stages.md#the-status-index).
 */
export const addStatusIndex = (orders: dynamodb.Table, config: Pick<StageConfig, 'ordersStatusIndex'>): void => {
  if (!config.ordersStatusIndex) return;
  orders.addGlobalSecondaryIndex({
    indexName: statusIndex.name,
    partitionKey: { name: statusIndex.partitionKey, type: dynamodb.AttributeType.STRING },
    projectionType: dynamodb.ProjectionType.INCLUDE,
    nonKeyAttributes: [...statusIndex.projected],
  });
};
