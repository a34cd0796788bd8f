import { Aws, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { authorizationHeaderPattern } from '../shared/api-keys.ts';
import { errorCodes, errorHeaders, errorRecord, gatewayResponseCodes } from '../shared/errors.ts';
import { basePath, type Operation, routes } from '../shared/routes.ts';
import type { DataRemovalPolicy, StageConfig } from './stage-config.ts';
import { StoreFunction } from './store-function.ts';
import { StoreOrdersMonitoring } from './store-orders-monitoring.ts';

export interface StoreOrdersStackProps extends StackProps {
  readonly config: StageConfig;
}

/** How each route reaches its function, beside what the function itself is (infra/function-settings.ts). */
type RouteIntegration = {
  /** How long API Gateway waits for the function (at most 29 s buffered, 15 min streamed). */
  readonly integrationTimeout: Duration;
  /** The one DynamoDB action the function needs on the orders table. */
  readonly ordersAction: string;
};

const routeIntegrations: Record<Operation, RouteIntegration> = {
  listOrders: { integrationTimeout: Duration.minutes(15), ordersAction: 'dynamodb:Scan' },
  cancelOrder: { integrationTimeout: Duration.seconds(29), ordersAction: 'dynamodb:UpdateItem' },
};

const dataRemovalPolicies: Record<DataRemovalPolicy, RemovalPolicy> = {
  retain: RemovalPolicy.RETAIN,
  'retain-except-on-create': RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
};

/**
 * The JSON access log line of every request. Status and latency are bare numbers (they always
 * have one) so Logs Insights can compare and sort them; the rest may be "-" and stays quoted.
 * No header is logged: the Authorization header carries the key.
 */
const accessLogFields = {
  requestId: '"$context.requestId"',
  extendedRequestId: '"$context.extendedRequestId"',
  ip: '"$context.identity.sourceIp"',
  requestTime: '"$context.requestTime"',
  httpMethod: '"$context.httpMethod"',
  path: '"$context.path"',
  resourcePath: '"$context.resourcePath"',
  status: '$context.status',
  responseLatency: '$context.responseLatency',
  responseLength: '"$context.responseLength"',
  integrationStatus: '"$context.integration.status"',
  integrationLatency: '"$context.integration.latency"',
  integrationError: '"$context.integration.error"',
  authorizerStatus: '"$context.authorizer.status"',
  authorizerLatency: '"$context.authorizer.latency"',
  authorizerError: '"$context.authorizer.error"',
  principalId: '"$context.authorizer.principalId"',
  errorResponseType: '"$context.error.responseType"',
  errorMessage: '"$context.error.message"',
  userAgent: '"$context.identity.userAgent"',
} as const;
export const accessLogFormat = `{${Object.entries(accessLogFields)
  .map(([name, value]) => `"${name}":${value}`)
  .join(',')}}`;

export const pascalCase = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** A static gateway response header value is a single-quoted string literal. */
const staticValue = (value: string): string => {
  if (value.includes("'")) throw new Error(`A gateway response header value cannot hold a single quote: ${value}`);
  return `'${value}'`;
};

/**
 * One stage of the Store Orders Service: the REST API (routes from shared/routes.ts, gateway
 * responses from shared/errors.ts), the TOKEN authorizer, one function per operation, the
 * orders and API-keys tables, and the stage's alarms, dashboard and saved queries.
 */
export class StoreOrdersStack extends Stack {
  readonly api: apigw.RestApi;
  readonly ordersTable: dynamodb.Table;
  readonly apiKeysTable: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StoreOrdersStackProps) {
    super(scope, id, props);
    const { config } = props;
    const logRemovalPolicy = config.logRemovalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    // Tables. Orders items are written by the store's other systems too: the key schema is a contract.
    const tableDefaults = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: config.data.deletionProtection,
      removalPolicy: dataRemovalPolicies[config.data.removalPolicy],
    };
    this.ordersTable = new dynamodb.Table(this, 'OrdersTable', {
      ...tableDefaults,
      tableName: config.ordersTableName,
      partitionKey: { name: 'id', type: dynamodb.AttributeType.NUMBER },
    });
    this.apiKeysTable = new dynamodb.Table(this, 'ApiKeysTable', {
      ...tableDefaults,
      tableName: config.apiKeysTableName,
      partitionKey: { name: 'keyHash', type: dynamodb.AttributeType.STRING },
    });

    // The authorizer looks a key's hash up in the keys table, and may do nothing else.
    const tables = { orders: this.ordersTable.tableName, apiKeys: this.apiKeysTable.tableName };
    const authorizerFunction = new StoreFunction(this, 'AuthorizerFunction', { config, name: 'authorizer', tables });
    this.apiKeysTable.grant(authorizerFunction.function, 'dynamodb:GetItem');

    const authorizer = new apigw.TokenAuthorizer(this, 'TokenAuthorizer', {
      handler: authorizerFunction.function,
      identitySource: apigw.IdentitySource.header('Authorization'),
      // The gateway answers a missing or malformed header with 401 itself, without invoking the function.
      validationRegex: authorizationHeaderPattern.source,
      resultsCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
    });

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: config.logRetentionDays, removalPolicy: logRemovalPolicy });

    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: `store-orders-${config.stage}`,
      description: `Store Orders Service (${config.stage})`,
      // Regional: streamed responses may idle for 5 minutes here, only 30 s through the edge.
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // Execution logs (errors only) need the account-wide API Gateway logging role.
      cloudWatchRole: true,
      // Never taken away with a stack: the other stage in the account may rely on it.
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      defaultMethodOptions: { authorizer, authorizationType: apigw.AuthorizationType.CUSTOM },
      deployOptions: {
        stageName: config.stage,
        throttlingRateLimit: config.throttling.rateLimit,
        throttlingBurstLimit: config.throttling.burstLimit,
        tracingEnabled: true,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        // Request and response data would include the Authorization header: never.
        dataTraceEnabled: false,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(accessLogFormat),
      },
    });

    // API Gateway would create the execution log group itself, without retention: create it first.
    const executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${config.stage}`,
      retention: config.logRetentionDays,
      removalPolicy: logRemovalPolicy,
    });
    this.api.deploymentStage.node.addDependency(executionLogs);

    // Every answer the gateway gives on its own is an Error record of the shared table.
    for (const [type, code] of Object.entries(gatewayResponseCodes)) {
      const body = JSON.stringify(errorRecord(code));
      // The body is sent as a template in which $ starts a variable: the records must not hold one.
      if (body.includes('$')) throw new Error(`The ${code} record cannot be a gateway response template: it holds "$"`);
      const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...errorHeaders(code) };
      this.api.addGatewayResponse(`GatewayResponse-${type}`, {
        type: apigw.ResponseType.of(type),
        statusCode: String(errorCodes[code].status),
        responseHeaders: {
          ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, staticValue(value)])),
          'X-Request-Id': 'context.requestId',
        },
        templates: { 'application/json': body },
      });
    }

    // One function, resource and method per route of the shared route table.
    const routeFunctions: { name: string; fn: StoreFunction }[] = [];
    for (const route of routes) {
      const settings = routeIntegrations[route.operation];
      const fn = new StoreFunction(this, `${pascalCase(route.operation)}Function`, { config, name: route.operation, tables });
      this.ordersTable.grant(fn.function, settings.ordersAction);
      routeFunctions.push({ name: pascalCase(route.operation), fn });

      const integration = new apigw.LambdaIntegration(fn.function, {
        responseTransferMode: route.streaming ? apigw.ResponseTransferMode.STREAM : apigw.ResponseTransferMode.BUFFERED,
        timeout: settings.integrationTimeout,
      });
      this.api.root.resourceForPath(`${basePath}${route.path}`).addMethod(route.method, integration, { operationName: route.operation });
    }

    const baseUrl = this.api.urlForPath(basePath);
    if (config.customDomain !== undefined) {
      const domain = this.api.addDomainName('CustomDomain', {
        domainName: config.customDomain.domainName,
        certificate: acm.Certificate.fromCertificateArn(this, 'CustomDomainCertificate', config.customDomain.certificateArn),
        endpointType: apigw.EndpointType.REGIONAL,
        securityPolicy: apigw.SecurityPolicy.TLS_1_2,
      });
      new CfnOutput(this, 'CustomDomainBaseUrl', {
        description: 'Base URL on the custom domain',
        value: `https://${config.customDomain.domainName}${basePath}`,
      });
      new CfnOutput(this, 'CustomDomainTarget', {
        description: 'Point a DNS alias (or CNAME) for the custom domain here',
        value: domain.domainNameAliasDomainName,
      });
    }

    const monitoring = new StoreOrdersMonitoring(this, 'Monitoring', {
      config,
      api: this.api,
      accessLogs,
      routeFunctions,
      authorizer: authorizerFunction,
      tables: [
        { id: 'OrdersTable', table: this.ordersTable, operations: [dynamodb.Operation.SCAN, dynamodb.Operation.UPDATE_ITEM] },
        { id: 'ApiKeysTable', table: this.apiKeysTable, operations: [dynamodb.Operation.GET_ITEM] },
      ],
    });

    new CfnOutput(this, 'BaseUrl', { description: `Base URL of the ${config.stage} API`, value: baseUrl });
    new CfnOutput(this, 'OrdersTableName', { value: this.ordersTable.tableName });
    new CfnOutput(this, 'ApiKeysTableName', {
      description: 'The table the key tool writes key hashes to',
      value: this.apiKeysTable.tableName,
    });
    new CfnOutput(this, 'ApiKeysTableRegion', {
      description: 'Region of the keys table (the key tool uses AWS_REGION or --region)',
      value: Aws.REGION,
    });
    new CfnOutput(this, 'IssueKeyCommand', {
      description: 'Issue an API key for this stage (with AWS credentials; the key is printed once)',
      value: `npm run keys -- create --stage ${config.stage} --name <name>`,
    });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'Subscribe on-call here', value: monitoring.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardUrl', { value: monitoring.dashboardUrl });

    // cdk-nag findings that are decisions, not oversights.
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-APIG2',
        reason:
          'No operation has a request body, and the only parameter (the orderId path segment) is validated by the function against the int64 rule, answering 400 invalid_order_id; a gateway validator would add nothing.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-APIG3',
        reason:
          'No WAF: every method needs a bearer key checked by the authorizer and the stage is throttled; a web ACL costs a monthly fee per stage even without traffic, and there is no body to inspect.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-COG4',
        reason:
          'Clients are programs holding bearer API keys (issued by `npm run keys`), not Cognito users: the Lambda TOKEN authorizer checks each key against the stage API-keys table.',
      },
    );
    Validations.of(this.api.node.findChild('CloudWatchRole')).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account-wide API Gateway logging role: the AWS-managed policy is the documented one, and the execution log groups it writes (API-Gateway-Execution-Logs_<apiId>/<stage>) are named by API Gateway at run time.',
    });
  }
}
