/**
 * The settings of a fixed-name table that keep its data safe (deletion protection, encryption,
 * point-in-time recovery) or may delete it (time to live), as the template declares them and as
 * DynamoDB describes them (DescribeTable, DescribeContinuousBackups, DescribeTimeToLive). For the
 * preflight's table checks (./table-checks.ts): CloudFormation applies none of them to a table it
 * adopts (`cdk import` takes the table as it is, and a later deploy sends the same properties, so
 * changes nothing) nor to a table someone changed by hand (drift); the live table must match first.
 */
import {
  DescribeContinuousBackupsCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import type { CfnResource } from './stage-templates.ts';

/** Each setting in words: `on`/`off`, the key that encrypts the table, the attribute TTL reads. */
export type TableSettings = {
  readonly deletionProtection: string;
  readonly encryption: string;
  readonly pointInTimeRecovery: string;
  readonly timeToLive: string;
};

/** An AWS owned key (DynamoDB's default; no SSEDescription) or a KMS key, AWS managed or not. */
const ownedKey = 'an AWS owned key';
const kmsKey = 'a KMS key';
const onOff = (on: boolean) => (on ? 'on' : 'off');
const ttlText = (enabled: boolean, attribute: string | undefined) => (enabled ? `on (attribute ${attribute})` : 'off');

/** What the template declares for a table. */
export const declaredSettings = ({ Properties: p = {} }: CfnResource): TableSettings => {
  const sse = p.SSESpecification as { SSEEnabled?: boolean } | undefined;
  const pitr = p.PointInTimeRecoverySpecification as { PointInTimeRecoveryEnabled?: boolean } | undefined;
  const ttl = p.TimeToLiveSpecification as { Enabled?: boolean; AttributeName?: string } | undefined;
  return {
    deletionProtection: onOff(p.DeletionProtectionEnabled === true),
    encryption: sse?.SSEEnabled === true ? kmsKey : ownedKey,
    pointInTimeRecovery: onOff(pitr?.PointInTimeRecoveryEnabled === true),
    timeToLive: ttlText(ttl?.Enabled === true, ttl?.AttributeName),
  };
};

/**
 * What DynamoDB describes for a live table, with its backups and TTL read. A KMS key is not told
 * apart as AWS managed or the customer's own (that needs KMS): either way the table is encrypted
 * with a key of the account's, which is what the stack's SSESpecification asks for.
 */
export const liveSettings = async (dynamoDb: DynamoDBClient, table: TableDescription): Promise<TableSettings> => {
  const TableName = table.TableName;
  const [backups, ttl] = await Promise.all([
    dynamoDb.send(new DescribeContinuousBackupsCommand({ TableName })),
    dynamoDb.send(new DescribeTimeToLiveCommand({ TableName })),
  ]);
  const sse = table.SSEDescription;
  const pitr = backups.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus;
  const ttlStatus = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  return {
    deletionProtection: onOff(table.DeletionProtectionEnabled === true),
    encryption: sse?.SSEType === 'KMS' && (sse.Status === 'ENABLED' || sse.Status === 'UPDATING') ? kmsKey : ownedKey,
    pointInTimeRecovery: onOff(pitr === 'ENABLED'),
    timeToLive: ttlText(ttlStatus === 'ENABLED' || ttlStatus === 'ENABLING', ttl.TimeToLiveDescription?.AttributeName),
  };
};

const settingNames: Record<keyof TableSettings, string> = {
  deletionProtection: 'deletion protection',
  encryption: 'encryption',
  pointInTimeRecovery: 'point-in-time recovery',
  timeToLive: 'time to live',
};

/** The AWS CLI command that brings `setting` of the live table to what the stack declares. */
const command = (tableName: string, setting: keyof TableSettings, declared: TableSettings, live: TableSettings): string => {
  const table = `aws dynamodb`;
  switch (setting) {
    case 'deletionProtection':
      return `${table} update-table --table-name ${tableName} --${declared.deletionProtection === 'on' ? '' : 'no-'}deletion-protection-enabled`;
    case 'encryption':
      return declared.encryption === kmsKey
        ? `${table} update-table --table-name ${tableName} --sse-specification Enabled=true,SSEType=KMS`
        : `${table} update-table --table-name ${tableName} --sse-specification Enabled=false`;
    case 'pointInTimeRecovery':
      return `${table} update-continuous-backups --table-name ${tableName} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=${declared.pointInTimeRecovery === 'on'}`;
    case 'timeToLive': {
      const on = /^on \(attribute (.*)\)$/;
      const [, wanted] = on.exec(declared.timeToLive) ?? [];
      const [, current] = on.exec(live.timeToLive) ?? [];
      // TTL is one attribute, turned off by naming the one it reads.
      const off =
        current === undefined
          ? ''
          : `${table} update-time-to-live --table-name ${tableName} --time-to-live-specification Enabled=false,AttributeName=${current}`;
      const enable =
        wanted === undefined
          ? ''
          : `${table} update-time-to-live --table-name ${tableName} --time-to-live-specification Enabled=true,AttributeName=${wanted}`;
      // DynamoDB takes one TTL change per table an hour (UpdateTimeToLive).
      return [off, enable].filter(Boolean).join('; an hour later, ');
    }
  }
};

export type SettingDifference = { readonly setting: keyof TableSettings; readonly text: string; readonly command: string };

/** Each setting where the live table is not what the template declares: in words, and the command that fixes it. */
export const settingDifferences = (
  tableName: string,
  declared: TableSettings,
  live: TableSettings,
  only: readonly (keyof TableSettings)[] = Object.keys(settingNames) as (keyof TableSettings)[],
): SettingDifference[] =>
  only
    .filter((setting) => declared[setting] !== live[setting])
    .map((setting) => ({
      setting,
      text: `${settingNames[setting]}: the stack declares ${declared[setting]}, the table has ${live[setting]}`,
      command: command(tableName, setting, declared, live),
    }));
