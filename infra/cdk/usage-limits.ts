import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { LimitClass, OperationContract } from '../function-contract.ts';
import { usagePlanName } from '../names.ts';
import type { StageConfig } from '../stage-config.ts';
import { methodLimitFields, type Throttling, type TierName } from '../tiers.ts';
import { resourcePath } from '../../shared/routes.ts';

// What limits each request of a stage: the stage's throttle per method (a list's and a page's
// below the stage's) and each tier's usage plan, per key. Both read each operation's limit class
// (its contract's `throttling`) and the stage's limits (infra/stage-config.ts, infra/tiers.ts).

/**
 * Per-method settings: metrics per method (alarms judge each route by what its client waits
 * for), and each method's throttle by its limit class, a list's and a page's below the stage's.
 * Throttle and execution logging level are set on every method: an entry inherits neither.
 */
export const methodOptions = (
  config: StageConfig,
  operations: readonly OperationContract[],
): Record<string, apigw.MethodDeploymentOptions> => {
  const { throttling: request, listThrottling: list, pagedListThrottling: pagedList } = config;
  const stageThrottles: Record<LimitClass, Throttling> = { request, list, pagedList };
  return Object.fromEntries(
    operations.map(({ route, throttling }) => {
      const limits = stageThrottles[throttling];
      return [
        `${resourcePath(route)}/${route.method}`,
        {
          metricsEnabled: true,
          throttlingRateLimit: limits.rateLimit,
          throttlingBurstLimit: limits.burstLimit,
          // A per-method entry does not inherit the stage-wide logging level (unset is OFF): repeat it.
          loggingLevel: apigw.MethodLoggingLevel.ERROR,
          dataTraceEnabled: false,
        },
      ];
    }),
  );
};

/**
 * One usage plan per tier (`store-orders-<stage>-<tier>`): each key's rate, burst and daily
 * quota, and a list's or page's own throttle per key. Keys join a plan through the key tool, never
 * through the stack: the plans hold no keys here, so a deploy never changes who is in which.
 */
export const addUsagePlans = (
  api: apigw.RestApi,
  config: StageConfig,
  routeFunctions: readonly { readonly contract: OperationContract; readonly method: apigw.Method }[],
): Record<TierName, apigw.UsagePlan> => {
  // A list or page method has its own throttle per key besides the key's overall one.
  const ownLimits = routeFunctions.flatMap(({ contract, method }) => {
    const limitClass = contract.throttling;
    return limitClass === 'request' ? [] : [{ method, field: methodLimitFields[limitClass] }];
  });
  const plans = Object.entries(config.tiers).map(([tier, limits]) => {
    const plan = api.addUsagePlan(`UsagePlan-${tier}`, {
      name: usagePlanName(config.stage, tier),
      description: `Store Orders ${config.stage}: limits of each key in tier ${tier}`,
      throttle: limits.throttling,
      quota: { limit: limits.dailyQuota, period: apigw.Period.DAY },
      apiStages: [{ stage: api.deploymentStage, throttle: ownLimits.map(({ method, field }) => ({ method, throttle: limits[field] })) }],
    });
    return [tier, plan] as const;
  });
  return Object.fromEntries(plans) as Record<TierName, apigw.UsagePlan>;
};
