/**
 * The docs' tables that restate configuration say what the code says: the stage settings
 * (docs/reference/stages.md) and the limit tiers (docs/api.md) against infra/stage-config.ts; the alarms
 * and the access-log fields (docs/operating.md) against the synthesized templates, i.e. what
 * deploys. The tables stay written for people; these tests read them back and compare.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localStage, type StageConfig, stages } from '../../infra/stage-config.ts';
import { requestsPerAddress, unlimitedTier } from '../../infra/tiers.ts';
import { repoRoot, stageNames, sharedApp } from '../lib/cdk.ts';
import { tableRows } from '../lib/markdown.ts';
import { contractOf } from '../../infra/registry.ts';

const page = (name: string) => readFileSync(join(repoRoot, 'docs', name), 'utf8');

/** `1 000 000` or `1,000,000` → 1000000. */
const count = (text: string) => Number(text.replace(/[\s,]/g, ''));
const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const shift = (strategy: StageConfig['deployment']) => {
  if (strategy === 'LambdaAllAtOnce') return 'all at once';
  const canary = /^LambdaCanary10Percent(\d+)Minutes$/.exec(strategy);
  if (canary) return `10 % for ${canary[1]} minutes, then the rest`;
  const linear = /^LambdaLinear10PercentEvery(\d+)Minutes?$/.exec(strategy);
  if (linear) return `10 % more every ${linear[1]} minute${linear[1] === '1' ? '' : 's'}`;
  throw new Error(`no wording for ${strategy}`);
};

/** Each row of the stage table: what its cell must say for a stage, and which settings it shows. */
const stageRows: Record<string, { cell: (config: StageConfig) => string; shows: (keyof StageConfig)[] }> = {
  'stage throttling (requests/s, burst)': {
    cell: (c) => `${c.throttling.rateLimit}, ${c.throttling.burstLimit}`,
    shows: ['throttling'],
  },
  'list throttling (requests/s, burst); list reserved concurrency': {
    cell: (c) => `${c.listThrottling.rateLimit}, ${c.listThrottling.burstLimit}; ${c.listReservedConcurrency}`,
    shows: ['listThrottling', 'listReservedConcurrency'],
  },
  'v2 page throttling (requests/s, burst); v2 page reserved concurrency': {
    cell: (c) => `${c.pagedListThrottling.rateLimit}, ${c.pagedListThrottling.burstLimit}; ${c.pagedListReservedConcurrency}`,
    shows: ['pagedListThrottling', 'pagedListReservedConcurrency'],
  },
  'how a deploy shifts traffic (CodeDeploy)': { cell: (c) => shift(c.deployment), shows: ['deployment'] },
  'authorizer cache TTL (a revoked key works up to this long)': {
    cell: (c) => `${c.authorizerCacheTtlSeconds} s`,
    shows: ['authorizerCacheTtlSeconds'],
  },
  'list Scan segments (`SCAN_SEGMENTS`)': { cell: (c) => String(c.scanSegments), shows: ['scanSegments'] },
  'function log level (`POWERTOOLS_LOG_LEVEL`)': { cell: (c) => c.logLevel, shows: ['logLevel'] },
  'log retention; log groups on stack deletion': {
    cell: (c) => `${c.logRetentionDays} days; ${c.logRemovalPolicy === 'retain' ? 'kept' : 'deleted'}`,
    shows: ['logRetentionDays', 'logRemovalPolicy'],
  },
  'console "Test" button may invoke the functions': { cell: (c) => yesNo(c.consoleTestInvoke), shows: ['consoleTestInvoke'] },
  'tables on stack deletion; deletion protection': {
    // Every stage keeps its tables (RetainExceptOnCreate, test/infra/tables.test.ts); the config sets protection.
    cell: (c) => `kept (removed only if their first deploy fails); ${c.data.deletionProtection ? 'on' : 'off'}`,
    shows: ['data'],
  },
  'alarm thresholds: 5xx %, cancel p99 ms, list first byte p99 ms, v2 page p99 ms, refused keys (per 5 min)': {
    cell: (c) =>
      [
        c.alarms.serverErrorRatePercent,
        // Each latency guard's threshold is its operation's contract's.
        ...(['cancelOrder', 'listOrders', 'listOrdersPaged'] as const).map(
          (operation) => contractOf(operation).alarms.latencyP99!.thresholdMs[c.stage],
        ),
        c.alarms.authFailures,
      ].join(', '),
    shows: ['alarms'],
  },
  '5xx-rate alarm: judged in 5 minutes with at least this many requests': {
    cell: ({ alarms: a }) => String(a.serverErrorMinRequests),
    shows: ['alarms'],
  },
  'refused-share guard: points above the old version, judged with at least this many answers of each': {
    cell: ({ alarms: a }) => `${a.refusedShare.points}, ${a.refusedShare.minAnswers}`,
    shows: ['alarms'],
  },
  'busy-share guard: points above the old version, judged with at least this many answers of each': {
    cell: ({ alarms: a }) => `${a.busyShare.points}, ${a.busyShare.minAnswers}`,
    shows: ['alarms'],
  },
  'a list whose client takes nothing is cut after (`LIST_STALL_SECONDS`)': {
    cell: (c) => `${c.listStallSeconds} s`,
    shows: ['listStallSeconds'],
  },
  'API keys start with': { cell: (c) => `\`${c.keyPrefix}\``, shows: ['keyPrefix'] },
  "only tokens of the key tool's form reach the authorizer (others: 401 from API Gateway)": {
    cell: (c) => yesNo(c.onlyIssuedKeys),
    shows: ['onlyIssuedKeys'],
  },
  'AWS WAF: requests per source address in the rate window (then 429)': {
    cell: (c) =>
      `${requestsPerAddress(c.tiers, c.firewall.evaluationWindowSeconds).toLocaleString('en-US')} in ${c.firewall.evaluationWindowSeconds} s`,
    shows: ['firewall'],
  },
  "every request needs its key's usage identifier (the tiers' limits apply)": {
    cell: (c) => yesNo(c.requireUsageKey),
    shows: ['requireUsageKey'],
  },
  'the orders table has the status index ([deployed alone](#the-status-index))': {
    cell: (c) => yesNo(c.ordersStatusIndex),
    shows: ['ordersStatusIndex'],
  },
  'the synthetic client and the smoke step ask for a filtered page ([once the index is ACTIVE](#the-status-index))': {
    cell: (c) => yesNo(c.statusFilterChecks),
    shows: ['statusFilterChecks'],
  },
  'alarm e-mail, custom domain': {
    // "none", possibly followed by how to set them; a stage that sets either must name it.
    cell: (c) =>
      c.alarms.email === undefined && c.customDomain === undefined ? 'none' : [c.alarms.email, c.customDomain?.domainName].join(', '),
    shows: ['alarms', 'customDomain'],
  },
};
/** Settings the stage table leaves to other places: names (stated in the prose beside it) and the tiers (their own table). */
const shownElsewhere: (keyof StageConfig)[] = ['stage', 'stackName', 'ordersTableName', 'apiKeysTableName', 'tiers', 'defaultTier'];

describe('the stage table (docs/reference/stages.md)', () => {
  const rows = tableRows(page('reference/stages.md'), 'setting');

  it('has one row per group of settings, in the stages the config defines', () => {
    expect(rows.map(([setting]) => setting)).toEqual(Object.keys(stageRows));
    expect(stageNames).toEqual(['staging', 'production']);
  });

  it.each(Object.keys(stageRows))('says what infra/stage-config.ts says: %s', (setting) => {
    const [, staging, production] = rows.find(([name]) => name === setting)!;
    const expected = stageRows[setting]!.cell;
    // The last row may add a hint after "none"; every other cell is exactly the config's value.
    const matches = (cell: string, config: StageConfig) =>
      setting === 'alarm e-mail, custom domain' ? cell.startsWith(expected(config)) : cell === expected(config);
    expect({ staging: matches(staging!, stages.staging), production: matches(production!, stages.production) }, setting).toEqual({
      staging: true,
      production: true,
    });
  });

  it('shows every setting of the stage config, or it is named as shown elsewhere', () => {
    const shown = new Set([...Object.values(stageRows).flatMap((row) => row.shows), ...shownElsewhere]);
    const settings = new Set(stageNames.flatMap((stage) => Object.keys(stages[stage]) as (keyof StageConfig)[]));
    expect([...settings].filter((setting) => !shown.has(setting))).toEqual([]);
  });
});

describe('the tier table (docs/api.md)', () => {
  const rows = tableRows(page('api.md'), 'tier');

  it('lists every tier of every stage with its limits, as infra/stage-config.ts defines them', () => {
    const expected = stageNames.flatMap((stage) =>
      Object.entries(stages[stage].tiers).map(([name, tier]) => ({
        tier: name,
        default: name === stages[stage].defaultTier,
        stage,
        rate: `${tier.throttling.rateLimit}, ${tier.throttling.burstLimit}`,
        list: `${tier.listThrottling.rateLimit}, ${tier.listThrottling.burstLimit}`,
        page: `${tier.pagedListThrottling.rateLimit}, ${tier.pagedListThrottling.burstLimit}`,
        perDay: tier.dailyQuota,
        listsAtOnce: String(tier.concurrentLists),
      })),
    );
    const documented = rows
      .filter(([, stage]) => stage !== 'local only')
      .map(([tier, stage, rate, list, page, perDay, listsAtOnce]) => ({
        tier: /^`(\w+)`/.exec(tier!)![1],
        default: tier!.includes('(default)'),
        stage,
        rate,
        list,
        page,
        perDay: count(perDay!),
        listsAtOnce,
      }));
    expect(documented).toEqual(expected);
  });

  it('lists the local-only developer tier as unlimited', () => {
    expect(Object.keys(localStage.tiers)).toContain(unlimitedTier);
    expect(rows.filter(([, stage]) => stage === 'local only')).toEqual([[`\`${unlimitedTier}\``, 'local only', '—', '—', '—', '—', '—']]);
  });
});

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

const { template } = sharedApp();

describe.each(stageNames)('docs/operating.md against the %s template', (stage) => {
  const resources = template(stage).toJSON().Resources as Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const markdown = page('operating.md');

  it('lists every alarm the stack makes, no other, and which of them guard deploys', () => {
    const prefix = `StoreOrders-${stage}-`;
    // Alarm id (the name without the stage prefix) by logical id: the deployment groups name alarms by logical id.
    const alarmIds = new Map(
      ofType('AWS::CloudWatch::Alarm').map(([logicalId, alarm]) => [logicalId, String(alarm.Properties.AlarmName).slice(prefix.length)]),
    );
    const templateIds = [...alarmIds.values()].sort();
    const guardIds = new Set(
      ofType('AWS::CodeDeploy::DeploymentGroup').flatMap(([, group]) =>
        (group.Properties.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms.map((alarm) =>
          alarmIds.get(alarm.Name.Ref),
        ),
      ),
    );
    const documented = tableRows(markdown, 'alarm').flatMap(([names, , guards, tells]) =>
      [...names!.matchAll(/`(\w+)(…)?`/g)].flatMap(([, name, ellipsis]) => {
        // `ApiKeysTable…`: every alarm whose id starts so.
        const ids = ellipsis === undefined ? [name!] : templateIds.filter((id) => id.startsWith(name!));
        return ids.map((id) => ({ id, guards, tells }));
      }),
    );
    expect(documented.map(({ id }) => id).sort()).toEqual(templateIds);
    expect(documented.filter(({ id, guards }) => (guards === 'yes') !== guardIds.has(id))).toEqual([]);
    // Whom each tells, as its actions say: the paging topic, the ticket topic, or nobody (an SLO's window alarm).
    const topicIds = new Map(ofType('AWS::SNS::Topic').map(([logicalId, topic]) => [logicalId, String(topic.Properties.DisplayName)]));
    const tellsOf = (id: string) => {
      const alarm = ofType('AWS::CloudWatch::Alarm').find(([, candidate]) => candidate.Properties.AlarmName === `${prefix}${id}`)![1];
      const action = (alarm.Properties.AlarmActions as { Ref: string }[] | undefined)?.[0];
      if (action === undefined) return 'nobody';
      return topicIds.get(action.Ref)!.endsWith('tickets') ? 'ticket' : 'page';
    };
    expect(documented.filter(({ id, tells }) => tells !== tellsOf(id))).toEqual([]);
    expect(guardIds.size).toBeGreaterThan(0);
  });

  it('names the access log fields the stage logs, in its order', () => {
    const [[, stageResource]] = ofType('AWS::ApiGateway::Stage') as [[string, Resources[string]]];
    const format = String((stageResource.Properties.AccessLogSetting as { Format: string }).Format);
    const logged = [...format.matchAll(/"(\w+)":/g)].map(([, name]) => name);
    const bullet = /^ *- the API access log: one JSON line per request with ([\s\S]*?)\.\n/m.exec(markdown)?.[1] ?? '';
    const documented = [...bullet.matchAll(/`(\w+)`/g)].map(([, name]) => name);
    expect(documented).toEqual(logged);
    expect(logged.length).toBeGreaterThan(10);
  });
});

describe('the table reader', () => {
  it('reads the body rows of the table a header names, indented or not, and stops where the table ends', () => {
    const markdown = [
      'text',
      '  | a | b |',
      '  |---|---|',
      '  | 1 | `x` |',
      '  | 2 | y z |',
      '',
      '| a | c |',
      '|---|---|',
      '| 3 | 4 |',
    ].join('\n');
    expect(tableRows(markdown, 'a')).toEqual([
      ['1', '`x`'],
      ['2', 'y z'],
    ]);
    expect(() => tableRows(markdown, 'missing')).toThrow('no table starting with "missing"');
  });
});
