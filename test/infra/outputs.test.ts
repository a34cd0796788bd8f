import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { cdkJsonContext, logicalId, stageNames, sharedApp, tempDir } from '../lib/cdk.ts';

const { stack, template } = sharedApp();

/** The literal tail of a Fn::Join output (what the URL ends with). */
const joinTail = (value: unknown): string => {
  const parts = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  return String(parts.at(-1));
};

describe.each(stageNames)('the %s outputs', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const s = stack(stage);

  it('give the base URL of the stage, ending in /v1', () => {
    const output = t.findOutputs('BaseUrl').BaseUrl!;
    expect(joinTail(output.Value)).toBe('/v1');
    expect(JSON.stringify(output.Value)).toContain('execute-api');
    expect(JSON.stringify(output.Value)).toContain(logicalId(s, s.api.deploymentStage));
  });

  it('name both tables', () => {
    t.hasOutput('OrdersTableName', { Value: { Ref: logicalId(s, s.ordersTable) } });
    t.hasOutput('ApiKeysTableName', { Value: { Ref: logicalId(s, s.apiKeysTable) } });
  });

  it('give what the key tool needs to issue a key: table, region and the exact command', () => {
    t.hasOutput('ApiKeysTableRegion', { Value: { Ref: 'AWS::Region' } });
    t.hasOutput('IssueKeyCommand', { Value: `npm run keys -- create --stage ${stage} --name "who the key is for"` });
    expect(config.apiKeysTableName).toMatch(new RegExp(`^store-orders-${stage}-`));
  });

  it('point on-call at the alarm topic, the dashboard and the web ACL (its sampled requests)', () => {
    t.hasOutput('AlarmTopicArn', {});
    expect(JSON.stringify(t.findOutputs('DashboardUrl'))).toContain(`#dashboards:name=StoreOrders-${stage}`);
    t.hasOutput('WebAclArn', { Value: { 'Fn::GetAtt': [s.getLogicalId(s.firewall.webAcl), 'Arn'] } });
  });

  it('have no custom domain unless the stage configures one', () => {
    expect(config.customDomain).toBeUndefined();
    t.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    expect(t.findOutputs('CustomDomainBaseUrl')).toEqual({});
  });
});

describe('a custom domain in the stage configuration', () => {
  const app = new App({ outdir: tempDir('store-orders-domain-'), context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000';
  const config = { ...stages.production, customDomain: { domainName: 'orders.example.com', certificateArn } };
  const t = Template.fromStack(new StoreOrdersStack(app, 'DomainStack', { config }));

  it('serves the stage on that domain with TLS 1.2 and a regional certificate', () => {
    t.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'orders.example.com',
      RegionalCertificateArn: certificateArn,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    t.resourceCountIs('AWS::ApiGateway::BasePathMapping', 1);
  });

  it('outputs the base URL on the domain and the DNS target', () => {
    t.hasOutput('CustomDomainBaseUrl', { Value: 'https://orders.example.com/v1' });
    t.hasOutput('CustomDomainTarget', {});
  });
});
