import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { stageNames, sharedApp } from '../lib/cdk.ts';

type Violation = {
  ruleName: string;
  severity: string;
  acknowledgedId?: string;
  acknowledgedAt?: string;
  reason?: string;
  violatingConstructs: { constructPath: string }[];
};
type ValidationReport = {
  pluginReports: { pluginName: string; conclusion: string; violations: Violation[]; suppressedViolations?: Violation[] }[];
};

describe('cdk-nag AwsSolutions over both stacks', () => {
  const { app, outdir, template } = sharedApp();
  // Throws with the findings if any rule fails (the app registers the checks, as `cdk synth` runs it).
  app.synth();
  const report: ValidationReport = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
  const awsSolutions = report.pluginReports.find((plugin) => plugin.pluginName === 'AwsSolutions');
  const suppressed = awsSolutions?.suppressedViolations ?? [];

  it('ran and left zero unresolved findings, errors or warnings', () => {
    expect(awsSolutions?.conclusion).toBe('success');
    expect(report.pluginReports.flatMap((plugin) => plugin.violations)).toEqual([]);
  });

  it('checked both stacks', () => {
    const stacks = new Set(
      suppressed.flatMap((violation) => violation.violatingConstructs.map(({ constructPath }) => constructPath.split('/')[0])),
    );
    expect([...stacks].sort()).toEqual(['StoreOrders-account', ...stageNames.map((stage) => `StoreOrders-${stage}`)].sort());
  });

  it('acknowledges only these rules, each with a written reason', () => {
    expect([...new Set(suppressed.map((violation) => violation.ruleName))].sort()).toEqual([
      'AwsSolutions-APIG2',
      'AwsSolutions-COG4',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AwsSolutions-IAM5[Resource::*]',
      // Where the pre-traffic hook and the Synthetics canary need them (infra/cdk/release-checks.ts).
      // The hook may invoke any version of the functions it checks (a grant that does not change with a deploy).
      'AwsSolutions-IAM5[Resource::<AuthorizerFunction40EC414F.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<CancelOrderFunction194127E5.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<ListOrdersFunction8BBCFFF4.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<ListOrdersPagedFunction93E26B37.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<PreTrafficHookFunction1974E8B2.Arn>:*]',
      'AwsSolutions-IAM5[Resource::<SyntheticClientArtifacts1E1EAEB5.Arn>/*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/lambda/cwsyn-*]',
      'AwsSolutions-S1',
      // The v2 list's cursor keys, rotated by hand (infra/cdk/store-orders-stack.ts).
      'AwsSolutions-SMG4',
    ]);
    for (const violation of suppressed) expect(violation.reason?.length).toBeGreaterThan(60);
  });

  it('has no acknowledgement that silences nothing', () => {
    const acknowledgements = app.node
      .findAll()
      .flatMap((construct) =>
        construct.node.metadata
          .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          .flatMap((entry) =>
            Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({ at: construct.node.path, id, reason })),
          ),
      )
      // The Control Tower acknowledgements are checked by control-tower.test.ts.
      .filter(({ id }) => !id.startsWith('cdk-validator-cfnguard::'));
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const { at, id, reason } of acknowledgements) {
      expect(id).toMatch(/^AwsSolutions::AwsSolutions-[A-Z]+\d+/);
      expect(reason.trim().length).toBeGreaterThan(60);
      expect(suppressed.some((violation) => violation.acknowledgedAt === at && violation.acknowledgedId === id)).toBe(true);
    }
  });

  it('suppresses the wildcard resource only where it holds nothing but the X-Ray actions, or what Synthetics needs', () => {
    type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
    for (const stage of stageNames) {
      const policies = [
        ...Object.values(template(stage).findResources('AWS::IAM::Policy')).map((policy) => policy.Properties.PolicyDocument),
        ...Object.values(template(stage).findResources('AWS::IAM::Role')).flatMap((role) =>
          ((role.Properties.Policies ?? []) as { PolicyDocument: unknown }[]).map((policy) => policy.PolicyDocument),
        ),
      ] as { Statement: Statement[] }[];
      const wildcards = policies.flatMap((policy) => policy.Statement).filter((statement) => statement.Resource === '*');
      for (const statement of wildcards) {
        const actions = [statement.Action].flat().sort();
        if (actions[0]?.startsWith('xray:')) expect(actions).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
        // The canary's role (CDK's): PutMetricData limited to Synthetics' namespace, and the bucket listing Synthetics checks;
        // the probes' roles (the canary's and the hook's): PutMetricData limited to the probes' own (ProbeBusy).
        else if (actions[0] === 'cloudwatch:PutMetricData')
          expect(statement.Condition).toEqual({
            StringEquals: { 'cloudwatch:namespace': expect.stringMatching(/^(CloudWatchSynthetics|StoreOrders\/Probes)$/) },
          });
        else expect(actions).toEqual(['s3:ListAllMyBuckets']);
      }
    }
    // Per stage: the four functions' X-Ray grants, the canary's role, and the hook's (ProbeBusy).
    expect(suppressed.filter((violation) => violation.ruleName === 'AwsSolutions-IAM5[Resource::*]')).toHaveLength(6 * stageNames.length);
  });
});
