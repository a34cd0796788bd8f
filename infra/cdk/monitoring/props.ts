import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { FunctionContract, OperationContract } from '../../function-contract.ts';
import type { StageConfig } from '../../stage-config.ts';
import type { StoreFunction } from '../store-function.ts';

/**
 * What the monitoring of a stage (../store-orders-monitoring.ts) is built from. Its own module,
 * below the construct and its parts, so that the parts do not import the construct that imports them.
 */
export interface StoreOrdersMonitoringProps {
  readonly config: StageConfig;
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.ILogGroup;
  /** The route functions, each under the name its alarms and graphs use (e.g. ListOrders), with its contract. */
  readonly routeFunctions: readonly {
    readonly name: string;
    readonly contract: OperationContract;
    readonly route: OperationContract['route'];
    readonly fn: StoreFunction;
  }[];
  readonly authorizer: StoreFunction;
  readonly authorizerContract: FunctionContract;
  /** The stage's Synthetics canary (infra/cdk/release-checks.ts), by name. */
  readonly canaryName: string;
  /** The orders table, which the store's other systems write too (./orders-writes.ts). */
  readonly ordersTable: dynamodb.ITable;
  /** Each table with the operations this service performs on it (DynamoDB reports throttles per operation). */
  readonly tables: readonly { readonly id: string; readonly table: dynamodb.Table; readonly operations: dynamodb.Operation[] }[];
}
