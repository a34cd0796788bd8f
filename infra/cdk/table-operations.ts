import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { TableAccess } from '../function-contract.ts';

type TableName = 'orders' | 'apiKeys' | 'listLeases';

/** The table each grant is on: an index is its table's. */
const tableOf: Readonly<Record<keyof TableAccess, TableName>> = {
  orders: 'orders',
  apiKeys: 'apiKeys',
  listLeases: 'listLeases',
  ordersStatusIndex: 'orders',
};

/** Actions DynamoDB publishes no per-operation metrics for (control plane). */
const controlPlane = new Set(['DescribeTable']);

/**
 * The operations the functions perform on each table, read from their grants (`tableAccess` in
 * their contracts): those DynamoDB reports throttles and errors for, per operation, which
 * the monitoring watches. In the order of aws-cdk-lib's `dynamodb.Operation`. An action that is
 * neither such an operation nor known as control plane stops the synth, so a new grant cannot go unwatched.
 */
export const tableOperations = (grants: Iterable<TableAccess>): Record<TableName, dynamodb.Operation[]> => {
  const performed: Record<TableName, Set<string>> = { orders: new Set(), apiKeys: new Set(), listLeases: new Set() };
  const known = new Set<string>(Object.values(dynamodb.Operation));
  for (const access of grants)
    for (const [grant, actions] of Object.entries(access) as [keyof TableAccess, readonly string[]][])
      for (const action of actions.map((name) => name.replace(/^dynamodb:/, ''))) {
        if (!known.has(action) && !controlPlane.has(action))
          throw new Error(`tableAccess grants dynamodb:${action}, which is no dynamodb.Operation: add it to the monitoring`);
        performed[tableOf[grant]].add(action);
      }
  const of = (table: TableName) => Object.values(dynamodb.Operation).filter((operation) => performed[table].has(operation));
  return { orders: of('orders'), apiKeys: of('apiKeys'), listLeases: of('listLeases') };
};
