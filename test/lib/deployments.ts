/**
 * How long CodeDeploy watches a shift, and how late a metric reaches an alarm: what a guard alarm
 * has to go off within (test/infra/guard-alarms.test.ts, test/shipped/alarm-scenarios.test.ts).
 */

/**
 * Time from a metric's datapoint to the alarm seeing it: AWS services publish their metrics at
 * one-minute granularity, typically available within a minute or two, and CloudWatch evaluates
 * alarms once a minute (docs/decisions.md, issue 17). Three minutes is that with room.
 */
export const metricDelaySeconds = 180;

/**
 * How long CodeDeploy watches the alarms of a deployment with this predefined configuration: a
 * canary's bake, or the time until a linear shift's last step. All at once: no shift to watch.
 */
export const watchedSeconds = (deploymentConfigName: string): number => {
  const canary = /^CodeDeployDefault\.LambdaCanary10Percent(\d+)Minutes?$/.exec(deploymentConfigName);
  if (canary) return Number(canary[1]) * 60;
  const linear = /^CodeDeployDefault\.LambdaLinear10PercentEvery(\d+)Minutes?$/.exec(deploymentConfigName);
  if (linear) return 9 * Number(linear[1]) * 60;
  if (deploymentConfigName === 'CodeDeployDefault.LambdaAllAtOnce') return 0;
  throw new Error(`unknown deployment configuration ${deploymentConfigName}`);
};
