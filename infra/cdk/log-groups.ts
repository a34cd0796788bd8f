import { Aws, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { StageConfig } from '../stage-config.ts';

/** AWS Control Tower's CT.CLOUDWATCH.PR.2 asks for at least a year of retention. */
const controlTowerRetentionDays = 365;

/**
 * A stage that keeps its logs keeps them, and their key, when the stack is deleted, but not when
 * the deploy that created them fails (RetainExceptOnCreate): a failed first deploy leaves nothing
 * behind to retry around.
 */
const removalPolicyOf = (config: StageConfig) =>
  config.logRemovalPolicy === 'retain' ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY;

/**
 * The stage's key for its logs (Control Tower CT.CLOUDWATCH.PR.3): the logs hold order ids,
 * key ids and client IP addresses, and a key of the stage's own lets the account decide who may
 * read them and record every use in CloudTrail, for $1 a month and fractions of a cent per
 * 10,000 uses (CloudWatch Logs caches data keys). Kept as long as the logs it encrypts are.
 */
export const addLogsKey = (scope: Construct, config: StageConfig): kms.Key => {
  const key = new kms.Key(scope, 'LogsKey', {
    description: `Store Orders ${config.stage}: encrypts the stage's CloudWatch log groups`,
    enableKeyRotation: true,
    removalPolicy: removalPolicyOf(config),
    pendingWindow: Duration.days(30),
  });
  // CloudWatch Logs' documented key policy: the service may use the key for this account's log groups only.
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      principals: [new iam.ServicePrincipal(`logs.${Aws.REGION}.amazonaws.com`)],
      actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:*` },
      },
    }),
  );
  // Grants only for AWS services using the key on the account's behalf (Control Tower CT.KMS.PR.3).
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['kms:CreateGrant'],
      resources: ['*'],
      conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
    }),
  );
  return key;
};

/** A log group of the stage: its retention and removal policy, encrypted with its logs key. */
export const addStageLogGroup = (
  scope: Construct,
  id: string,
  props: { readonly config: StageConfig; readonly encryptionKey: kms.IKey; readonly logGroupName?: string },
): logs.LogGroup => {
  const { config } = props;
  const group = new logs.LogGroup(scope, id, {
    ...(props.logGroupName === undefined ? {} : { logGroupName: props.logGroupName }),
    retention: config.logRetentionDays,
    removalPolicy: removalPolicyOf(config),
    encryptionKey: props.encryptionKey,
  });
  if (config.logRetentionDays < controlTowerRetentionDays) {
    Validations.of(group).acknowledge({
      id: 'cdk-validator-cfnguard::cloudwatch_log_group_retention_period_check',
      reason: `${config.stage} keeps its logs ${config.logRetentionDays} days: it serves no client's orders (production keeps a year, the record of which key cancelled which order), and a year of test traffic would cost storage for nothing.`,
    });
  }
  return group;
};
