/**
 * The stage's AWS WAF web ACL, associated with its API stage (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md).
 * AWS WAF judges a request before API Gateway's authorizer runs (API Gateway developer guide, "Use
 * AWS WAF to protect your REST APIs"), so what it blocks costs no Lambda invocation and no key lookup.
 * Two rules: AWS's list of addresses known for bots and attacks (AWSManagedRulesAmazonIpReputationList),
 * then a rate per source address sized from the stage's tiers (infra/tiers.ts, requestsPerAddress).
 * A blocked request gets API Gateway's WAF_FILTERED gateway response, an Error record like every
 * other answer (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md): no WAF custom response.
 * Its metrics (AWS/WAFV2) are on, its request log off; AWS keeps a sample of the requests each rule
 * matched for three hours, at no charge.
 */
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { webAclName } from '../names.ts';
import type { StageConfig } from '../stage-config.ts';
import { requestsPerAddress } from '../tiers.ts';

/** The rules, by the metric name (CloudWatch dimension Rule) each carries after the web ACL's: `store-orders-<stage>-<rule>`. */
export const firewallRules = {
  ipReputation: 'ip-reputation',
  ratePerAddress: 'rate-per-address',
} as const;
export type FirewallRule = keyof typeof firewallRules;

/** A rule's metric name (the `Rule` dimension of its AWS/WAFV2 metrics). */
export const firewallRuleMetricName = (stage: string, rule: FirewallRule) => `${webAclName(stage)}-${firewallRules[rule]}`;

const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  metricName,
  sampledRequestsEnabled: true,
});

export type StageFirewallProps = { readonly config: StageConfig; readonly stage: apigw.Stage };

export class StageFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  /** Requests one address may make in the evaluation window before it is blocked. */
  readonly requestsPerAddress: number;

  constructor(scope: Construct, id: string, { config, stage }: StageFirewallProps) {
    super(scope, id);
    const window = config.firewall.evaluationWindowSeconds;
    this.requestsPerAddress = requestsPerAddress(config.tiers, window);
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: webAclName(config.stage),
      // AWS WAF's description pattern takes no parentheses or apostrophes.
      description: `Store Orders ${config.stage}: AWS IP reputation list, ${this.requestsPerAddress} requests per source address in ${window} s`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(webAclName(config.stage)),
      rules: [
        {
          name: firewallRules.ipReputation,
          priority: 0,
          // The group's own actions: block addresses on Amazon's threat lists, count the DDoS list.
          overrideAction: { none: {} },
          statement: { managedRuleGroupStatement: { vendorName: 'AWS', name: 'AWSManagedRulesAmazonIpReputationList' } },
          visibilityConfig: visibility(firewallRuleMetricName(config.stage, 'ipReputation')),
        },
        {
          name: firewallRules.ratePerAddress,
          priority: 1,
          action: { block: {} },
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', evaluationWindowSec: window, limit: this.requestsPerAddress } },
          visibilityConfig: visibility(firewallRuleMetricName(config.stage, 'ratePerAddress')),
        },
      ],
    });
    // The stage's ARN names the stage resource (Ref): the association waits for the stage to exist.
    new wafv2.CfnWebACLAssociation(this, 'Association', { resourceArn: stage.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
