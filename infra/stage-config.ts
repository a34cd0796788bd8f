/**
 * Everything that differs between the deployed stages, in one typed place. The CDK app, the
 * key tool and the docs read it; nothing else branches on the stage name.
 */
export type StageName = 'staging' | 'production';

export type StageConfig = {
  readonly stage: StageName;
  readonly stackName: string;
  /** Keys of this stage start with it, so a leaked key is recognisable (see docs). */
  readonly keyPrefix: string;
  /** Fixed names: the orders table is a contract with the store's other systems, which write to it. */
  readonly ordersTableName: string;
  readonly apiKeysTableName: string;
};

export const stages: Readonly<Record<StageName, StageConfig>> = {
  staging: {
    stage: 'staging',
    stackName: 'StoreOrders-staging',
    keyPrefix: 'so_test_',
    ordersTableName: 'store-orders-staging-orders',
    apiKeysTableName: 'store-orders-staging-api-keys',
  },
  production: {
    stage: 'production',
    stackName: 'StoreOrders-production',
    keyPrefix: 'so_live_',
    ordersTableName: 'store-orders-production-orders',
    apiKeysTableName: 'store-orders-production-api-keys',
  },
};

/** The local run (npm start) and the key tool's default target. */
export const localStage = { keyPrefix: 'so_local_', ordersTableName: 'orders', apiKeysTableName: 'api-keys', dynamoDbPort: 8000 } as const;
