import { RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/** The stack's name: one per account and region, whatever stages live there. */

/**
 * API Gateway's account-wide settings: the role it writes execution logs with. There is one
 * `AWS::ApiGateway::Account` per account and region, so it has one owner here instead of one
 * per stage (two stages would overwrite each other, and two concurrent deploys could fail).
 * Both stage stacks depend on it; both are kept when the stack is deleted, because API
 * Gateway keeps using the role for every API of the account.
 */
export class StoreOrdersAccountStack extends Stack {
  readonly cloudWatchRole: iam.Role;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.cloudWatchRole = new iam.Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway writes execution logs of every REST API in this account and region with this role',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    this.cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new apigw.CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: this.cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);

    Validations.of(this.cloudWatchRole).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account-wide API Gateway logging role: the AWS-managed policy is the documented one, and the execution log groups it writes (API-Gateway-Execution-Logs_<apiId>/<stage>) are named by API Gateway at run time.',
    });
  }
}
