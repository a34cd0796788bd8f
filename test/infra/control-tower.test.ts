import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { stageNames, synthApp } from '../lib/cdk.ts';

type Violation = {
  ruleName: string;
  reason?: string;
  acknowledgedAt?: string;
  acknowledgedId?: string;
  violatingConstructs: { constructPath: string }[];
};
type Report = { pluginReports: { pluginName: string; conclusion: string; violations: Violation[]; suppressedViolations?: Violation[] }[] };

/**
 * AWS Control Tower's proactive controls (cfn-guard rules of @cdklabs/cdk-validator-cfnguard),
 * run on every synth beside cdk-nag: an unacknowledged finding fails `cdk synth` and this test.
 */
describe('the Control Tower proactive controls', () => {
  const { app, outdir, template } = synthApp({ controlTower: true });
  app.synth();
  const report: Report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
  const guard = report.pluginReports.find((plugin) => plugin.pluginName === 'cdk-validator-cfnguard');
  const acknowledged = guard?.suppressedViolations ?? [];
  const rulesIn = (stack: string) =>
    [
      ...new Set(
        acknowledged
          .filter((v) => v.violatingConstructs.some(({ constructPath }) => constructPath.startsWith(`${stack}/`)))
          .map((v) => v.ruleName),
      ),
    ].sort();

  it('ran over every stack and left no finding unacknowledged', () => {
    expect(guard?.conclusion).toBe('success');
    expect(guard?.violations).toEqual([]);
  });

  it('acknowledges in production only what the controls cannot read or what is decided against, each with a reason', () => {
    // CT.LAMBDA.PR.2: the SourceArn CDK builds from the account id is no literal; CT.LAMBDA.PR.3: no VPC, see the reason.
    // CT.S3.PR.2/4/9/10/11: the Synthetics canary's bucket of its own run logs (infra/cdk/release-checks.ts).
    // CT.CLOUDWATCH.PR.1: the SLOs' window alarms, whose composite alarm notifies (infra/cdk/monitoring/slo.ts).
    const canaryBucket = [
      's3_bucket_default_encryption_kms_check',
      's3_bucket_logging_enabled_check',
      's3_bucket_object_lock_enabled_check',
      's3_bucket_versioning_enabled_check',
      's3_event_notifications_enabled_check',
    ];
    expect(rulesIn('StoreOrders-production')).toEqual([
      'cloudwatch_alarm_action_check',
      'lambda_function_public_access_prohibited_check',
      'lambda_inside_vpc_check',
      ...canaryBucket,
    ]);
    // Staging also keeps its logs for less than a year.
    expect(rulesIn('StoreOrders-staging')).toEqual([
      'cloudwatch_alarm_action_check',
      'cloudwatch_log_group_retention_period_check',
      'lambda_function_public_access_prohibited_check',
      'lambda_inside_vpc_check',
      ...canaryBucket,
    ]);
    for (const violation of acknowledged) expect(violation.reason?.length).toBeGreaterThan(80);
  });

  it('has no acknowledgement that silences nothing', () => {
    const acknowledgements = app.node.findAll().flatMap((construct) =>
      construct.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.keys(entry.data as Record<string, string>).map((id) => ({ at: construct.node.path, id })))
        .filter(({ id }) => id.startsWith('cdk-validator-cfnguard::')),
    );
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const { at, id } of acknowledgements) {
      expect(acknowledged.some((violation) => violation.acknowledgedAt === at && violation.acknowledgedId === id)).toBe(true);
    }
  });

  it('keeps production logs for a year (the record of which key cancelled which order)', () => {
    expect(stages.production.logRetentionDays).toBeGreaterThanOrEqual(365);
    for (const group of Object.values(template('production').findResources('AWS::Logs::LogGroup'))) {
      expect(group.Properties.RetentionInDays).toBeGreaterThanOrEqual(365);
    }
  });

  it('grants no console test-invoke permissions in production', () => {
    const permissions = Object.values(template('production').findResources('AWS::Lambda::Permission'));
    expect(JSON.stringify(permissions)).not.toContain('test-invoke-stage');
    expect(JSON.stringify(Object.values(template('staging').findResources('AWS::Lambda::Permission')))).toContain('test-invoke-stage');
  });

  it.each(stageNames)(
    'encrypts every %s log group with the stage key, usable by CloudWatch Logs for this account only, granting only for AWS services',
    (stage) => {
      const t = template(stage);
      const [keyId] = Object.keys(t.findResources('AWS::KMS::Key'));
      expect(keyId).toBeDefined();
      for (const group of Object.values(t.findResources('AWS::Logs::LogGroup'))) {
        expect(group.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      }
      t.hasResourceProperties('AWS::KMS::Key', {
        EnableKeyRotation: true,
        KeyPolicy: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: Match.objectLike({ 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] }) },
              Condition: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': Match.anyValue() } },
            }),
            Match.objectLike({
              Effect: 'Deny',
              Action: 'kms:CreateGrant',
              Condition: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
            }),
          ]),
        },
      });
    },
  );
});
