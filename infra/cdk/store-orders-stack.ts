import { Aws, CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { authorizationPatternFor } from '../../functions/authorizer/api-keys.ts';
import { statusIndex } from '../../shared/status-index.ts';
import { basePath, resourcePath, type Route } from '../../shared/routes.ts';
import { accessLogFormat, addGatewayResponses } from './api-gateway.ts';
import type { FunctionContract, OperationContract, TableAccess } from '../function-contract.ts';
import { registryProblems } from './contract-checks.ts';
import { addFunctionSecrets } from './function-secrets.ts';
import { addLogsKey, addStageLogGroup } from './log-groups.ts';
import { deploymentApplicationName, functionConstructId, pascalCase, restApiName, serviceName } from '../names.ts';
import { type FunctionName, functionsOf, knownAnswerFiles, type Registry, registry as serviceRegistry } from '../registry.ts';
import type { DeploymentStrategy, StageConfig } from '../stage-config.ts';
import { type TierName, tierProblems } from '../tiers.ts';
import { StageFirewall } from './stage-firewall.ts';
import { StoreFunction, type StoreFunctionProps } from './store-function.ts';
import { PreTrafficHook, SyntheticClient, secretArn } from './release-checks.ts';
import { StoreOrdersMonitoring } from './store-orders-monitoring.ts';
import { addListLeasesTable, addTables, type TableDeploy } from './tables.ts';
import { tableOperations } from './table-operations.ts';
import { addUsagePlans, methodOptions } from './usage-limits.ts';

export interface StoreOrdersStackProps extends StackProps, TableDeploy {
  readonly config: StageConfig;
  /** Deploy even while a guard alarm is in ALARM (an emergency fix): `cdk deploy -c ignoreDeploymentAlarms=true`. */
  readonly ignoreDeploymentAlarms?: boolean;
  /**
   * Leave the pre-traffic hook off the aliases: only for the one deploy that brings the release
   * checks to a stage, whose canary key can be issued only once the stack has its canary tier
   * (`cdk deploy -c skipPreTrafficHook=true`, `npm run keys -- canary`, then deploy again).
   */
  readonly skipPreTrafficHook?: boolean;
  /** The functions to deploy (default: the service's, infra/registry.ts); tests add or take one away. */
  readonly registry?: Registry;
}

/**
 * Every DynamoDB action each function's role allows, per table of its stage: these and nothing
 * else (test/infra/iam.test.ts evaluates the synthesized roles against it with an IAM simulator).
 */
export const functionTableActions = Object.fromEntries(functionsOf().map((contract) => [contract.name, contract.tableAccess])) as Readonly<
  Record<FunctionName, TableAccess>
>;

const deploymentConfigs: Record<DeploymentStrategy, codedeploy.ILambdaDeploymentConfig> = {
  LambdaAllAtOnce: codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE,
  LambdaCanary10Percent5Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  LambdaCanary10Percent10Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
  LambdaCanary10Percent15Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
  LambdaCanary10Percent30Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
  LambdaLinear10PercentEvery1Minute: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  LambdaLinear10PercentEvery2Minutes: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
  LambdaLinear10PercentEvery3Minutes: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
  LambdaLinear10PercentEvery10Minutes: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
};

/** What every function of the stage shares: its tables, its deployments and its logs key. */
type FunctionCommons = Pick<StoreFunctionProps, 'tables' | 'deployment' | 'logsKey'>;

/** Control Tower's CT.LAMBDA.PR.2 reads only literal SourceAccount/SourceArn values; CDK builds them from the account's id. */
const invokePermissionAcknowledgement = {
  id: 'cdk-validator-cfnguard::lambda_function_public_access_prohibited_check',
  reason:
    "Not public (CT.LAMBDA.PR.2): every permission lets only apigateway.amazonaws.com invoke a live alias, with a SourceArn naming this account's API and its stage or authorizer (Fn::Join of partition, region, account id and API id, which the rule cannot read as a literal: see the template).",
};

/** An operation of the registry with the function that serves it and its API method. */
export type RouteFunction = {
  /** As its alarms and graphs name it: ListOrders. */
  readonly name: string;
  readonly contract: OperationContract;
  readonly route: Route;
  readonly fn: StoreFunction;
  readonly method: apigw.Method;
};

/**
 * One stage of the Store Orders Service: the orders and API-keys tables, the TOKEN authorizer,
 * the REST API (each operation's route and function from its contract, collected by
 * infra/registry.ts; gateway responses from shared/errors.ts), one function per route behind its
 * `live` alias, and the stage's alarms, dashboard and queries. Construct ids are part of the
 * deployed contract: moving a table would replace it.
 */
export class StoreOrdersStack extends Stack {
  readonly config: StageConfig;
  readonly registry: Registry;
  readonly api: apigw.RestApi;
  readonly ordersTable: dynamodb.Table;
  readonly apiKeysTable: dynamodb.Table;
  readonly listLeasesTable: dynamodb.Table;
  /** The secrets the functions' contracts ask for, by construct id (the v2 list's CursorKeys). */
  readonly secrets: ReadonlyMap<string, secretsmanager.Secret>;
  readonly authorizerFunction: StoreFunction;
  readonly routeFunctions: RouteFunction[];
  readonly usagePlans: Readonly<Record<TierName, apigw.UsagePlan>>;
  /** AWS WAF in front of the stage: AWS's IP reputation list and a rate per source address. */
  readonly firewall: StageFirewall;
  readonly monitoring: StoreOrdersMonitoring;
  readonly preTrafficHook: PreTrafficHook;
  readonly syntheticClient: SyntheticClient;

  constructor(scope: Construct, id: string, props: StoreOrdersStackProps) {
    super(scope, id, props);
    this.config = props.config;
    this.registry = props.registry ?? serviceRegistry;
    // Checked once, here, so a tier above its stage, or an alarm without its threshold or runbook section, never reaches a template.
    const problems = tierProblems(this.config);
    if (problems.length > 0) throw new Error(`${this.config.stage} stage config: ${problems.join('; ')}`);
    const contractProblems = registryProblems(this.registry, this.config.stage);
    if (contractProblems.length > 0) throw new Error(`${this.config.stage} stage, the registry: ${contractProblems.join('; ')}`);
    [this.ordersTable, this.apiKeysTable] = addTables(this, this.config, { firstDeploy: props.firstDeploy ?? false });
    this.listLeasesTable = addListLeasesTable(this);
    this.secrets = addFunctionSecrets(this, functionsOf(this.registry), this.config);
    const tables = { orders: this.ordersTable.tableName, apiKeys: this.apiKeysTable.tableName, listLeases: this.listLeasesTable.tableName };
    const logsKey = addLogsKey(this, this.config);
    const deployment = this.addDeployments(props.ignoreDeploymentAlarms ?? false);
    const common = { deployment, logsKey, tables };
    this.authorizerFunction = this.addAuthorizerFunction(common);
    const accessLogs = addStageLogGroup(this, 'AccessLogs', { config: this.config, encryptionKey: logsKey });
    this.api = this.addApi(accessLogs, logsKey);
    this.firewall = new StageFirewall(this, 'Firewall', { config: this.config, stage: this.api.deploymentStage });
    this.routeFunctions = this.registry.operations.map((contract) => this.addRoute(contract, common));
    this.usagePlans = addUsagePlans(this.api, this.config, this.routeFunctions);
    this.preTrafficHook = this.addPreTrafficHook(logsKey, props.skipPreTrafficHook ?? false);
    const baseUrl = this.api.urlForPath(basePath);
    this.syntheticClient = new SyntheticClient(this, 'SyntheticClient', {
      config: this.config,
      baseUrl,
      ordersTable: this.ordersTable,
      knownAnswers: knownAnswerFiles(this.registry),
    });
    const performed = tableOperations(functionsOf(this.registry).map((contract) => contract.tableAccess));
    this.monitoring = new StoreOrdersMonitoring(this, 'Monitoring', {
      config: this.config,
      api: this.api,
      accessLogs,
      routeFunctions: this.routeFunctions,
      authorizer: this.authorizerFunction,
      authorizerContract: this.registry.authorizer,
      canaryName: this.syntheticClient.canaryName,
      ordersTable: this.ordersTable,
      tables: [
        { id: 'OrdersTable', table: this.ordersTable, operations: performed.orders },
        { id: 'ApiKeysTable', table: this.apiKeysTable, operations: performed.apiKeys },
        { id: 'ListLeasesTable', table: this.listLeasesTable, operations: performed.listLeases },
      ],
    });
    // Each deployment group watches the guards of its own function's new version, and the probes.
    for (const fn of [this.authorizerFunction, ...this.routeFunctions.map(({ fn }) => fn)])
      fn.addGuardAlarms(this.monitoring.guardsOf[fn.name]!);
    this.addCustomDomain();
    this.addOutputs();
    this.acknowledgeNagFindings();
  }

  /** One CodeDeploy application for the stage's functions, with one service role they share. */
  private addDeployments(ignoreAlarms: boolean): StoreFunctionProps['deployment'] {
    const application = new codedeploy.LambdaApplication(this, 'Deployments', {
      applicationName: deploymentApplicationName(this.config.stage),
    });
    const role = new iam.Role(this, 'DeploymentRole', {
      assumedBy: new iam.ServicePrincipal('codedeploy.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's documented policy for Lambda deployments: it may read the deployment's alarms and move aliases (lambda:UpdateAlias, lambda:GetAlias) and invoke hooks named CodeDeployHook_*, nothing else.",
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::<PreTrafficHookFunction1974E8B2.Arn>:*]',
      reason:
        'CDK grants the deployment role invoke on the pre-traffic hook function and its versions (`:*`); the hook is unversioned, so this is the one function only.',
    });
    return { application, role, config: deploymentConfigs[this.config.deployment], ignoreAlarms };
  }

  /** The authorizer looks a key's hash up in the keys table, and may do nothing else. */
  private addAuthorizerFunction(common: FunctionCommons) {
    const contract = this.registry.authorizer;
    const fn = new StoreFunction(this, 'AuthorizerFunction', { config: this.config, contract, ...common });
    this.grantTables(fn, contract.tableAccess);
    this.grantSecrets(fn, contract);
    Validations.of(fn.alias).acknowledge(invokePermissionAcknowledgement);
    return fn;
  }

  /** The BeforeAllowTraffic hook of every function: the new versions answer as the contract says, or the deploy stops. */
  private addPreTrafficHook(logsKey: kms.IKey, skip: boolean) {
    const hook = new PreTrafficHook(this, 'PreTrafficHook', {
      config: this.config,
      // Every function of the registry is a target: the hook invokes its new version (VERSION_ARNS), with its known answers.
      targets: [this.authorizerFunction, ...this.routeFunctions.map(({ fn }) => fn)],
      knownAnswers: knownAnswerFiles(this.registry),
      ordersTable: this.ordersTable,
      methodArnPrefix: `arn:${Aws.PARTITION}:execute-api:${Aws.REGION}:${Aws.ACCOUNT_ID}:${this.api.restApiId}/${this.config.stage}`,
      logsKey,
    });
    if (!skip) for (const fn of [this.authorizerFunction, ...this.routeFunctions.map(({ fn }) => fn)]) hook.guard(fn);
    return hook;
  }

  /**
   * The REST API, its stage (throttling, per-method metrics, access and execution logs, X-Ray)
   * and its gateway responses. API Gateway's account-wide logging role is StoreOrders-account's.
   */
  private addApi(accessLogs: logs.LogGroup, logsKey: kms.IKey) {
    const { config } = this;
    const authorizer = new apigw.TokenAuthorizer(this, 'TokenAuthorizer', {
      handler: this.authorizerFunction.alias,
      identitySource: apigw.IdentitySource.header('Authorization'),
      // The gateway answers a missing or malformed header, or a key no key of this stage can be, with
      // 401 itself, without invoking the function.
      validationRegex: authorizationPatternFor(config).source,
      resultsCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
    });
    const api = new apigw.RestApi(this, 'Api', {
      restApiName: restApiName(config.stage),
      description: `Store Orders Service (${config.stage})`,
      // Regional: streamed responses may idle for 5 minutes here, only 30 s through the edge.
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      cloudWatchRole: false,
      // Per-client limits: the authorizer returns the key's usage identifier, and every method
      // requires one, so each request counts against its key's usage plan (docs/decisions.md#limits).
      apiKeySourceType: apigw.ApiKeySourceType.AUTHORIZER,
      defaultMethodOptions: {
        authorizer,
        authorizationType: apigw.AuthorizationType.CUSTOM,
        apiKeyRequired: config.requireUsageKey,
      },
      deployOptions: {
        stageName: config.stage,
        throttlingRateLimit: config.throttling.rateLimit,
        throttlingBurstLimit: config.throttling.burstLimit,
        methodOptions: methodOptions(config, this.registry.operations),
        tracingEnabled: true,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        // Request and response data would include the Authorization header: never.
        dataTraceEnabled: false,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(accessLogFormat(serviceName(config.stage))),
      },
    });
    // API Gateway would create the execution log group itself, without retention: create it first.
    const executionLogs = addStageLogGroup(this, 'ExecutionLogs', {
      config,
      encryptionKey: logsKey,
      logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${config.stage}`,
    });
    api.deploymentStage.node.addDependency(executionLogs);
    // A firewall block lasts until the address's count over the rule's window falls: Retry-After says the window.
    addGatewayResponses(api, { WAF_FILTERED: { 'Retry-After': String(config.firewall.evaluationWindowSeconds) } });
    return api;
  }

  /** One route: its function behind the `live` alias, allowed exactly its DynamoDB actions and secrets, and its method. */
  private addRoute(contract: OperationContract, common: FunctionCommons): RouteFunction {
    const { route } = contract;
    const name = pascalCase(contract.name);
    const { reservedConcurrency } = contract.function;
    const fn = new StoreFunction(this, functionConstructId(contract.name), {
      config: this.config,
      contract,
      ...common,
      ...(reservedConcurrency === undefined ? {} : { reservedConcurrency: reservedConcurrency(this.config) }),
    });
    this.grantTables(fn, contract.tableAccess);
    this.grantSecrets(fn, contract);
    const method = this.api.root.resourceForPath(resourcePath(route)).addMethod(
      route.method,
      new apigw.LambdaIntegration(fn.alias, {
        responseTransferMode: route.streaming ? apigw.ResponseTransferMode.STREAM : apigw.ResponseTransferMode.BUFFERED,
        timeout: Duration.seconds(contract.integrationTimeoutSeconds),
        // The console's test-invoke stage needs a permission of its own: only where the stage config allows it.
        allowTestInvoke: this.config.consoleTestInvoke,
      }),
      { operationName: route.operation },
    );
    return { name, contract, route, fn, method };
  }

  /** A function reads exactly the secrets its contract names (GetSecretValue on each one's name). */
  private grantSecrets(fn: StoreFunction, contract: FunctionContract) {
    for (const secret of contract.secrets ?? [])
      fn.function.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [secretArn(this, secret.name(this.config.stage))],
        }),
      );
  }

  /** A function may do on each table exactly what its contract's `tableAccess` says, one grant per table. */
  private grantTables(fn: StoreFunction, access: TableAccess) {
    // Each table's ARN alone: Table.grant would add `<table>/index/*` to every grant on a table with an index.
    const arns: Record<keyof TableAccess, string> = {
      orders: this.ordersTable.tableArn,
      apiKeys: this.apiKeysTable.tableArn,
      listLeases: this.listLeasesTable.tableArn,
      ordersStatusIndex: `${this.ordersTable.tableArn}/index/${statusIndex.name}`,
    };
    for (const [table, actions] of Object.entries(access) as [keyof TableAccess, readonly string[]][])
      iam.Grant.addToPrincipal({ grantee: fn.function, actions: [...actions], resourceArns: [arns[table]] });
  }

  private addCustomDomain() {
    const { customDomain } = this.config;
    if (customDomain === undefined) return;
    const domain = this.api.addDomainName('CustomDomain', {
      domainName: customDomain.domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'CustomDomainCertificate', customDomain.certificateArn),
      endpointType: apigw.EndpointType.REGIONAL,
      securityPolicy: apigw.SecurityPolicy.TLS_1_2,
    });
    new CfnOutput(this, 'CustomDomainBaseUrl', {
      description: 'Base URL on the custom domain',
      value: `https://${customDomain.domainName}${basePath}`,
    });
    new CfnOutput(this, 'CustomDomainTarget', {
      description: 'Point a DNS alias (or CNAME) for the custom domain here',
      value: domain.domainNameAliasDomainName,
    });
  }

  private addOutputs() {
    const { config } = this;
    new CfnOutput(this, 'BaseUrl', { description: `Base URL of the ${config.stage} API`, value: this.api.urlForPath(basePath) });
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
      value: `npm run keys -- create --stage ${config.stage} --name "who the key is for"`,
    });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'Subscribe on-call here (pages)', value: this.monitoring.alarmTopic.topicArn });
    new CfnOutput(this, 'TicketTopicArn', {
      description: "Subscribe the team's queue here (tickets)",
      value: this.monitoring.ticketTopic.topicArn,
    });
    new CfnOutput(this, 'DashboardUrl', { value: this.monitoring.dashboardUrl });
    new CfnOutput(this, 'WebAclArn', {
      description: "The stage's AWS WAF web ACL (its sampled requests: aws wafv2 get-sampled-requests)",
      value: this.firewall.webAcl.attrArn,
    });
  }

  /** cdk-nag findings that are decisions, not oversights. */
  private acknowledgeNagFindings() {
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-APIG2',
        reason:
          "No operation has a request body. The parameters are validated by the functions, which answer a precise Error record: the orderId path segment against the int64 rule (400 invalid_order_id), the v2 list's query parameters against their ranges and the cursor's seal (400 invalid_query_parameter, invalid_cursor, cursor_expired, cursor_mismatch); a gateway validator checks only presence and would add nothing.",
      },
      invokePermissionAcknowledgement,
      {
        id: 'AwsSolutions::AwsSolutions-COG4',
        reason:
          'Clients are programs holding bearer API keys (issued by `npm run keys`), not Cognito users: the Lambda TOKEN authorizer checks each key against the stage API-keys table.',
      },
    );
  }
}
