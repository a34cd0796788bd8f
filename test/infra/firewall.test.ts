/**
 * Each stage's AWS WAF web ACL, as the template declares it: associated with the stage's API stage,
 * AWS's IP reputation list and a rate per source address sized from the stage's tiers, its blocks
 * answered by the gateway's WAF_FILTERED response, its metrics on the dashboard, its request log off.
 */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { webAclName } from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';
import { busiestKey, requestsPerAddress } from '../../infra/tiers.ts';
import { firewallRuleMetricName } from '../../infra/cdk/stage-firewall.ts';
import { errorCodes, gatewayResponseCodes } from '../../shared/errors.ts';
import { logicalId, stageNames, sharedApp } from '../lib/cdk.ts';
import { metricsRead, type Template } from '../lib/template.ts';

const { stack, template } = sharedApp();

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
const resourcesOf = (stage: (typeof stageNames)[number]) => template(stage).toJSON().Resources as Record<string, Resource>;
const ofType = (stage: (typeof stageNames)[number], type: string) =>
  Object.entries(resourcesOf(stage)).filter(([, resource]) => resource.Type === type);

describe.each(stageNames)('the %s firewall', (stage) => {
  const config = stages[stage];
  const s = stack(stage);
  const [[aclId, acl]] = ofType(stage, 'AWS::WAFv2::WebACL') as [[string, Resource]];
  const rules = acl.Properties.Rules as {
    Name: string;
    Priority: number;
    Statement: Record<string, unknown>;
    Action?: unknown;
    OverrideAction?: unknown;
    VisibilityConfig: Record<string, unknown>;
  }[];

  it('is one regional web ACL, named for the stage, letting through what no rule blocks', () => {
    expect(ofType(stage, 'AWS::WAFv2::WebACL')).toHaveLength(1);
    expect(acl.Properties).toMatchObject({
      Name: webAclName(stage),
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      VisibilityConfig: { CloudWatchMetricsEnabled: true, MetricName: webAclName(stage), SampledRequestsEnabled: true },
    });
  });

  it("is associated with the stage's own API stage, by the ARN form AWS WAF takes for a REST API stage", () => {
    const associations = ofType(stage, 'AWS::WAFv2::WebACLAssociation');
    expect(associations).toHaveLength(1);
    const [, association] = associations[0]!;
    const api = logicalId(s, s.api);
    const apiStage = logicalId(s, s.api.deploymentStage);
    // arn:<partition>:apigateway:<region>::/restapis/<api-id>/stages/<stage-name>
    expect(association.Properties).toEqual({
      ResourceArn: {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':apigateway:',
            { Ref: 'AWS::Region' },
            '::/restapis/',
            { Ref: api },
            '/stages/',
            { Ref: apiStage },
          ],
        ],
      },
      WebACLArn: { 'Fn::GetAtt': [aclId, 'Arn'] },
    });
  });

  it("blocks AWS's IP reputation list first, with the managed group's own actions", () => {
    expect(rules[0]).toMatchObject({
      Priority: 0,
      OverrideAction: { None: {} },
      Statement: { ManagedRuleGroupStatement: { VendorName: 'AWS', Name: 'AWSManagedRulesAmazonIpReputationList' } },
      VisibilityConfig: {
        CloudWatchMetricsEnabled: true,
        MetricName: firewallRuleMetricName(stage, 'ipReputation'),
        SampledRequestsEnabled: true,
      },
    });
  });

  it('then blocks an address over what its busiest key may make in the window, with no response of its own', () => {
    const window = config.firewall.evaluationWindowSeconds;
    expect(rules[1]).toEqual({
      Name: 'rate-per-address',
      Priority: 1,
      // No CustomResponse: the gateway's WAF_FILTERED answer, an Error record with X-Request-Id, stands.
      Action: { Block: {} },
      Statement: {
        RateBasedStatement: { AggregateKeyType: 'IP', EvaluationWindowSec: window, Limit: requestsPerAddress(config.tiers, window) },
      },
      VisibilityConfig: {
        CloudWatchMetricsEnabled: true,
        MetricName: firewallRuleMetricName(stage, 'ratePerAddress'),
        SampledRequestsEnabled: true,
      },
    });
    expect(rules).toHaveLength(2);
  });

  it('sizes the rate so that one key of any tier at its steady rate and full burst for the whole window is never blocked', () => {
    const window = config.firewall.evaluationWindowSeconds;
    const limit = requestsPerAddress(config.tiers, window);
    for (const tier of Object.values(config.tiers))
      expect(tier.throttling.rateLimit * window + tier.throttling.burstLimit).toBeLessThanOrEqual(limit);
    // The arithmetic docs/deploying.md shows: the busiest tier's rate × 60 s + its burst.
    const busiest = busiestKey(config.tiers);
    expect(limit).toBe(busiest.rateLimit * 60 + busiest.burstLimit);
    expect({ staging: 620, production: 3_100 }[stage]).toBe(limit);
    expect(limit).toBeGreaterThanOrEqual(10);
  });

  it('answers a block as the client slowing down would be told: 429 too_many_requests, an Error record', () => {
    expect(gatewayResponseCodes.WAF_FILTERED).toBe('too_many_requests');
    expect(errorCodes.too_many_requests.status).toBe(429);
    // A block lasts until the address's count over the window falls: a client told to retry in 1 s would retry into it.
    template(stage).hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'WAF_FILTERED',
      StatusCode: '429',
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': `'${stages[stage].firewall.evaluationWindowSeconds}'` }),
    });
  });

  it('logs no request (no logging configuration: metrics and the three-hour sample only) and keeps nothing when the stack goes', () => {
    expect(ofType(stage, 'AWS::WAFv2::LoggingConfiguration')).toEqual([]);
    expect(acl.DeletionPolicy).toBeUndefined();
  });

  it('puts what it lets through and blocks on the dashboard, with the dimensions its template gives its metrics', () => {
    const webAcl = String((acl.Properties.VisibilityConfig as { MetricName: string }).MetricName);
    const waf = metricsRead(template(stage).toJSON() as Template)
      .filter((metric) => metric.namespace === 'AWS/WAFV2')
      .map(({ name, dimensions }) => ({ name, dimensions }));
    const region = '${AWS::Region}';
    expect(waf).toEqual([
      { name: 'AllowedRequests', dimensions: { Region: region, Rule: 'ALL', WebACL: webAcl } },
      { name: 'BlockedRequests', dimensions: { Region: region, Rule: 'ALL', WebACL: webAcl } },
      ...rules.map((rule) => ({
        name: 'BlockedRequests',
        dimensions: { Region: region, Rule: rule.VisibilityConfig.MetricName, WebACL: webAcl },
      })),
    ]);
  });
});

describe('the two stages’ firewalls', () => {
  it('never meet in one account and region: their web ACLs, metrics and associations are each their own stage’s', () => {
    const names = stageNames.map((stage) => {
      const [[, acl]] = ofType(stage, 'AWS::WAFv2::WebACL') as [[string, Resource]];
      const rules = acl.Properties.Rules as { VisibilityConfig: { MetricName: string } }[];
      return [
        acl.Properties.Name,
        (acl.Properties.VisibilityConfig as { MetricName: string }).MetricName,
        ...rules.map((rule) => rule.VisibilityConfig.MetricName),
      ];
    });
    // A web ACL's name is unique in its account and region; its metric names keep two stages' counts apart.
    expect(names.map(([name]) => name)).toEqual(stageNames.map((stage) => webAclName(stage)));
    expect(new Set(names.flatMap((ofStage) => ofStage.slice(1))).size).toBe(names.flatMap((ofStage) => ofStage.slice(1)).length);
  });
});
