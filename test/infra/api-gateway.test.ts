import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { serviceName } from '../../infra/names.ts';
import { localStage, stages } from '../../infra/stage-config.ts';
import { listSlotProblems, tierNames, tierProblems, unlimitedTier } from '../../infra/tiers.ts';
import { accessLogFormat } from '../../infra/cdk/api-gateway.ts';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { authorizationPatternFor } from '../../functions/authorizer/api-keys.ts';
import { generateApiKey } from '../../infra/ops/key-store.ts';
import {
  type ErrorCode,
  errorCodes,
  errorRecord,
  type GatewayResponseType,
  gatewayResponseCodes,
  gatewayResponseHeaders,
  authorizerContextHeaders,
  quotaResetContextKey,
} from '../../shared/errors.ts';
import { resourcePath } from '../../shared/routes.ts';
import { routes } from '../../infra/registry.ts';
import { cdkJsonContext, logicalId, methodsByRoute, stageNames, sharedApp, synthApp, tempDir } from '../lib/cdk.ts';

const { stack, template } = sharedApp();

describe.each(stageNames)('the %s REST API', (stage) => {
  const config = stages[stage];
  const t = template(stage);

  it('is one regional REST API named for the stage, deployed to a stage of that name', () => {
    t.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    t.hasResourceProperties('AWS::ApiGateway::RestApi', {
      Name: `store-orders-${stage}`,
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    t.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: stage });
  });

  it('serves exactly the routes of the shared route table, each with its own function', () => {
    const methods = methodsByRoute(t);
    expect([...methods.keys()].sort()).toEqual(routes.map((route) => `${route.method} ${resourcePath(route)}`).sort());
    expect([...methods.keys()].sort()).toEqual(['DELETE /v1/store/orders/{orderId}', 'GET /v1/store/orders', 'GET /v2/store/orders']);
    for (const route of routes) {
      const method = methods.get(`${route.method} ${resourcePath(route)}`)!;
      expect(method).toMatchObject({ OperationName: route.operation, Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' } });
    }
  });

  it('streams the list response (ResponseTransferMode STREAM) and buffers the cancel response', () => {
    const methods = methodsByRoute(t);
    const list = methods.get('GET /v1/store/orders')!.Integration as Record<string, unknown>;
    const cancel = methods.get('DELETE /v1/store/orders/{orderId}')!.Integration as Record<string, unknown>;
    expect(list.ResponseTransferMode).toBe('STREAM');
    // Streaming goes through Lambda's InvokeWithResponseStream API, and may run up to 15 minutes.
    expect(JSON.stringify(list.Uri)).toContain('/response-streaming-invocations');
    expect(list.TimeoutInMillis).toBe(900_000);
    expect(cancel.ResponseTransferMode).toBe('BUFFERED');
    expect(JSON.stringify(cancel.Uri)).toContain('/invocations');
    expect(cancel.TimeoutInMillis).toBe(29_000);
    for (const route of routes) {
      const integration = methods.get(`${route.method} ${resourcePath(route)}`)!.Integration as Record<string, unknown>;
      expect(integration.ResponseTransferMode).toBe(route.streaming ? 'STREAM' : 'BUFFERED');
    }
  });

  it('invokes the live alias of each function, never the function itself, and lets API Gateway invoke only the aliases', () => {
    const s = stack(stage);
    const methods = methodsByRoute(t);
    for (const { route, fn } of s.routeFunctions) {
      const uri = JSON.stringify((methods.get(`${route.method} ${resourcePath(route)}`)!.Integration as { Uri: unknown }).Uri);
      expect(uri).toContain(JSON.stringify({ Ref: logicalId(s, fn.alias) }));
    }
    const aliases = [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)].map((fn) => ({ Ref: logicalId(s, fn.alias) }));
    const permissions = Object.values(t.findResources('AWS::Lambda::Permission'));
    expect(permissions.length).toBeGreaterThan(0);
    for (const permission of permissions) {
      expect(permission.Properties.Principal).toBe('apigateway.amazonaws.com');
      expect(aliases).toContainEqual(permission.Properties.FunctionName);
    }
  });

  it('puts every method behind the TOKEN authorizer', () => {
    const authorizerId = logicalId(stack(stage), stack(stage).node.findChild('TokenAuthorizer'));
    for (const method of methodsByRoute(t).values()) {
      expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } });
    }
  });

  it('has a TOKEN authorizer on the Authorization header, with the bearer regex and the stage cache TTL, invoking the live alias', () => {
    const alias = logicalId(stack(stage), stack(stage).authorizerFunction.alias);
    t.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    t.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      IdentityValidationExpression: authorizationPatternFor(config).source,
      AuthorizerResultTtlInSeconds: config.authorizerCacheTtlSeconds,
      AuthorizerUri: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([{ Ref: alias }])] }),
    });
  });

  describe('per-client limits', () => {
    it('take the usage identifier from the authorizer and require it on every method', () => {
      t.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
      const methods = [...methodsByRoute(t).values()];
      expect(methods).toHaveLength(routes.length);
      for (const method of methods) expect(method.ApiKeyRequired).toBe(true);
    });

    it('can leave the usage identifier unrequired for the one deploy that adopts keys issued before limits, plans still made', () => {
      const app = new App({ outdir: tempDir('store-orders-adopt-'), context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
      const adopting = Template.fromStack(
        new StoreOrdersStack(app, 'AdoptingStack', { config: { ...stages[stage], requireUsageKey: false } }),
      );
      for (const method of methodsByRoute(adopting).values()) expect(method.ApiKeyRequired).toBe(false);
      adopting.resourceCountIs('AWS::ApiGateway::UsagePlan', tierNames.length);
      expect(stages[stage].requireUsageKey).toBe(true);
    });

    it('have one usage plan per tier, named for stage and tier, with its rate, burst, daily quota, list and v2 page throttle on this stage', () => {
      const s = stack(stage);
      const apiId = { Ref: logicalId(s, s.api) };
      const stageRef = { Ref: logicalId(s, s.api.deploymentStage) };
      t.resourceCountIs('AWS::ApiGateway::UsagePlan', tierNames.length);
      for (const tier of tierNames) {
        const limits = config.tiers[tier];
        t.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
          UsagePlanName: `store-orders-${stage}-${tier}`,
          Throttle: { RateLimit: limits.throttling.rateLimit, BurstLimit: limits.throttling.burstLimit },
          Quota: { Limit: limits.dailyQuota, Period: 'DAY' },
          ApiStages: [
            {
              ApiId: apiId,
              Stage: stageRef,
              Throttle: {
                '/v1/store/orders/GET': { RateLimit: limits.listThrottling.rateLimit, BurstLimit: limits.listThrottling.burstLimit },
                '/v2/store/orders/GET': {
                  RateLimit: limits.pagedListThrottling.rateLimit,
                  BurstLimit: limits.pagedListThrottling.burstLimit,
                },
              },
            },
          ],
        });
      }
    });

    it('leave plan membership to the key tool: the template holds no API key and no usage plan key', () => {
      t.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
      t.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 0);
    });

    it("keep each tier within the stage's throttling, the list within its key's limit", () => {
      expect(tierProblems(config)).toEqual([]);
      for (const tier of tierNames) {
        expect(config.tiers[tier].throttling.rateLimit).toBeLessThanOrEqual(config.throttling.rateLimit);
        expect(config.tiers[tier].listThrottling.rateLimit).toBeLessThan(config.tiers[tier].throttling.rateLimit);
        expect(config.tiers[tier].pagedListThrottling.rateLimit).toBeLessThanOrEqual(config.tiers[tier].throttling.rateLimit);
      }
    });
  });

  it('validates the header with the pattern of the stage’s keys, in syntax JavaScript and Java read alike', () => {
    const [authorizer] = Object.values(t.findResources('AWS::ApiGateway::Authorizer'));
    const expression = authorizer!.Properties.IdentityValidationExpression as string;
    expect(expression).toBe(authorizationPatternFor(config).source);
    // API Gateway gets the source only: a flag (such as /i) would hold locally and not when deployed.
    expect(authorizationPatternFor(config).flags).toBe('');
    // Anchors, literal characters, character classes, + or * and a {n} count: nothing whose meaning differs by dialect.
    expect(expression).toMatch(/^\^[-A-Za-z0-9[\]\\._~+/=* {}]+\$$/);
  });

  it('lets only bearer keys of this stage’s form through to the authorizer function', () => {
    const expression = new RegExp(authorizationPatternFor(config).source);
    const key = generateApiKey(config.keyPrefix);
    expect(expression.test(`Bearer ${key}`)).toBe(true);
    expect(expression.test(`bearer   ${key}`)).toBe(true);
    const other = config.keyPrefix === 'so_live_' ? 'so_test_' : 'so_live_';
    for (const value of [`Bearer ${generateApiKey(other)}`, `Bearer ${key}x`, 'Bearer so_test_abc-DEF_123', 'Basic dXNlcjpwYXNz', 'Bearer'])
      expect([value, expression.test(value)]).toEqual([value, false]);
  });

  it('throttles the stage and each method, the list and the v2 page below the rest, with per-method metrics, traces it, and logs execution errors of every method', () => {
    // Data trace would log the Authorization header: off everywhere.
    const method = (path: string, httpMethod: string, limits: { rateLimit: number; burstLimit: number }) => ({
      HttpMethod: httpMethod,
      ResourcePath: path,
      MetricsEnabled: true,
      ThrottlingRateLimit: limits.rateLimit,
      ThrottlingBurstLimit: limits.burstLimit,
      // A per-method entry does not inherit the stage-wide one's logging level: unset would be OFF.
      LoggingLevel: 'ERROR',
      DataTraceEnabled: false,
    });
    t.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: stage,
      TracingEnabled: true,
      MethodSettings: [
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: config.throttling.rateLimit,
          ThrottlingBurstLimit: config.throttling.burstLimit,
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
        },
        // Resource paths in method settings escape "/" as "~1".
        method('/~1v1~1store~1orders', 'GET', config.listThrottling),
        method('/~1v1~1store~1orders~1{orderId}', 'DELETE', config.throttling),
        // A v2 page is a Scan or Query of up to 1,000 orders: its own limit, so pages cannot take what cancels need.
        method('/~1v2~1store~1orders', 'GET', config.pagedListThrottling),
      ],
    });
    for (const own of [config.listThrottling, config.pagedListThrottling]) {
      expect(own.rateLimit).toBeLessThan(config.throttling.rateLimit);
      expect(own.burstLimit).toBeLessThan(config.throttling.burstLimit);
    }
  });

  it('writes JSON access logs with the service, request ids, status, authorizer and integration errors, latency, first content and ip', () => {
    const format = accessLogFormat(serviceName(config.stage));
    t.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: { Format: format, DestinationArn: Match.anyValue() },
    });
    // What a log line looks like once API Gateway has filled the variables in.
    const line = JSON.parse(format.replaceAll(/\$context\.[A-Za-z.]+/g, (variable) => (/status|Latency$/.test(variable) ? '200' : '-')));
    expect(line.service).toBe(`store-orders-${stage}`);
    expect(Object.keys(line)).toEqual(
      expect.arrayContaining([
        'authorizerRequestId',
        'integrationRequestId',
        'responseTransferMode',
        'timeToFirstContent',
        'requestId',
        'extendedRequestId',
        'authorizerError',
        'status',
        'httpMethod',
        'path',
        'responseLatency',
        'integrationError',
        'ip',
      ]),
    );
    expect(format).toContain('"requestId":"$context.requestId"');
    expect(format).toContain('"extendedRequestId":"$context.extendedRequestId"');
    expect(format).toContain('"authorizerError":"$context.authorizer.error"');
    expect(format).toContain('"status":$context.status');
    expect(format).toContain('"ip":"$context.identity.sourceIp"');
    expect(format).toContain('"responseTransferMode":"$context.integration.responseTransferMode"');
    expect(format).toContain('"timeToFirstContent":"$context.integration.timeToFirstContent"');
    expect(format.toLowerCase()).not.toContain('authorization');
    t.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', Match.anyValue(), `/${stage}`]] },
      RetentionInDays: config.logRetentionDays,
    });
  });

  describe('gateway responses', () => {
    const required = [
      'UNAUTHORIZED',
      'INVALID_API_KEY',
      'QUOTA_EXCEEDED',
      'ACCESS_DENIED',
      'MISSING_AUTHENTICATION_TOKEN',
      'THROTTLED',
      // AWS WAF's block (403 by default), so that it is an Error record too (infra/cdk/stage-firewall.ts).
      'WAF_FILTERED',
      'AUTHORIZER_FAILURE',
      'AUTHORIZER_CONFIGURATION_ERROR',
      'INTEGRATION_FAILURE',
      'INTEGRATION_TIMEOUT',
      'DEFAULT_4XX',
      'DEFAULT_5XX',
    ];

    it('rewrite every answer the gateway gives on its own, per the shared table', () => {
      expect(Object.keys(gatewayResponseCodes)).toEqual(expect.arrayContaining(required));
      t.resourceCountIs('AWS::ApiGateway::GatewayResponse', Object.keys(gatewayResponseCodes).length);
      for (const [type, code] of Object.entries(gatewayResponseCodes) as [string, ErrorCode][]) {
        // The stage's firewall window replaces WAF_FILTERED's Retry-After (test/infra/firewall.test.ts).
        const stageHeaders = type === 'WAF_FILTERED' ? { 'Retry-After': String(config.firewall.evaluationWindowSeconds) } : {};
        const extraHeaders = Object.fromEntries(
          Object.entries({ ...gatewayResponseHeaders(type as GatewayResponseType), ...stageHeaders }).map(([name, value]) => [
            `gatewayresponse.header.${name}`,
            `'${value}'`,
          ]),
        );
        t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
          ResponseType: type,
          StatusCode: String(errorCodes[code].status),
          ResponseTemplates: { 'application/json': JSON.stringify(errorRecord(code)) },
          ResponseParameters: {
            'gatewayresponse.header.Content-Type': "'application/json'",
            'gatewayresponse.header.Cache-Control': "'no-store'",
            'gatewayresponse.header.X-Request-Id': 'context.requestId',
            ...extraHeaders,
            ...Object.fromEntries(
              Object.entries(authorizerContextHeaders[type as GatewayResponseType] ?? {}).map(([name, key]) => [
                `gatewayresponse.header.${name}`,
                `context.authorizer.${key}`,
              ]),
            ),
          },
        });
      }
    });

    it('answer with an Error record whose status is the response status', () => {
      const responses = t.findResources('AWS::ApiGateway::GatewayResponse');
      for (const { Properties } of Object.values(responses)) {
        const body = JSON.parse(Properties.ResponseTemplates['application/json']);
        expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
        expect(String(body.status)).toBe(Properties.StatusCode);
        expect(body.code).toBe(gatewayResponseCodes[Properties.ResponseType as keyof typeof gatewayResponseCodes]);
      }
    });

    it('answer 401 unauthorized with WWW-Authenticate: Bearer when the key is missing, malformed or refused', () => {
      for (const type of ['UNAUTHORIZED', 'ACCESS_DENIED']) {
        t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
          ResponseType: type,
          StatusCode: '401',
          ResponseParameters: Match.objectLike({ 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" }),
          ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":"unauthorized"') },
        });
      }
    });

    it('turn the 403 "Missing Authentication Token" of an unknown route into 404 route_not_found', () => {
      t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
        StatusCode: '404',
        ResponseTemplates: {
          'application/json': JSON.stringify({ code: 'route_not_found', message: errorCodes.route_not_found.message, status: 404 }),
        },
      });
    });

    // A gateway response cannot compute a header: the authorizer counts the seconds to 00:00 UTC, and the response maps them.
    it("answer throttling with 429 too_many_requests and Retry-After: 1, and an exhausted daily quota with the authorizer's count to its reset", () => {
      for (const [type, retryAfter] of [
        ['THROTTLED', "'1'"],
        ['QUOTA_EXCEEDED', `context.authorizer.${quotaResetContextKey}`],
      ]) {
        t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
          ResponseType: type,
          StatusCode: '429',
          ResponseParameters: Match.objectLike({
            'gatewayresponse.header.Retry-After': retryAfter,
            'gatewayresponse.header.Content-Type': "'application/json'",
          }),
          ResponseTemplates: { 'application/json': JSON.stringify(errorRecord('too_many_requests')) },
        });
      }
    });

    it('answer a usage identifier in no usage plan (a revoked key still cached) with 401 unauthorized, not 403', () => {
      t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'INVALID_API_KEY',
        StatusCode: '401',
        ResponseParameters: Match.objectLike({ 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" }),
        ResponseTemplates: { 'application/json': JSON.stringify(errorRecord('unauthorized')) },
      });
    });

    it('answer authorizer failures and other 5xx with 500 internal_error', () => {
      for (const type of ['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR', 'DEFAULT_5XX']) {
        t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
          ResponseType: type,
          StatusCode: '500',
          ResponseTemplates: { 'application/json': JSON.stringify(errorRecord('internal_error')) },
        });
      }
      t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', { ResponseType: 'DEFAULT_4XX', StatusCode: '400' });
    });

    // A customized DEFAULT_5XX also sets the status of every 5xx type not set on its own (AWS docs,
    // "Gateway response types"): without their own responses these would reach clients as 500.
    it('keep 504 for an integration timeout, with its own code, and 503 for a function Lambda throttled', () => {
      t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'INTEGRATION_TIMEOUT',
        StatusCode: '504',
        ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': "'1'" }),
        ResponseTemplates: { 'application/json': JSON.stringify(errorRecord('gateway_timeout')) },
      });
      t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'INTEGRATION_FAILURE',
        StatusCode: '503',
        ResponseTemplates: { 'application/json': JSON.stringify(errorRecord('service_unavailable')) },
      });
    });
  });
});

describe('a change to the shared error table', () => {
  it('makes a new API deployment, so the stage serves the new gateway responses', () => {
    const deploymentOf = (app: ReturnType<typeof synthApp>) =>
      Object.keys(app.template('staging').findResources('AWS::ApiGateway::Deployment'));
    // Before: the file's app, synthesized before the change; after: a fresh one.
    const before = deploymentOf(sharedApp());
    const entry = errorCodes.route_not_found as { message: string };
    const message = entry.message;
    try {
      entry.message = 'No such route.';
      expect(deploymentOf(synthApp())).not.toEqual(before);
    } finally {
      entry.message = message;
    }
    expect(deploymentOf(synthApp())).toEqual(before);
  });
});

describe('the tier check', () => {
  const base = stages.staging;
  it('refuses a tier above the stage throttling, a list above its key, a bad quota and an unknown default tier', () => {
    const problems = tierProblems({
      ...base,
      tiers: {
        standard: {
          throttling: { rateLimit: 21, burstLimit: 10 },
          listThrottling: { rateLimit: 0.5, burstLimit: 1 },
          pagedListThrottling: { rateLimit: 0.5, burstLimit: 1 },
          dailyQuota: 10,
          concurrentLists: 2,
        },
        high: {
          throttling: { rateLimit: 5, burstLimit: 10 },
          listThrottling: { rateLimit: 6, burstLimit: 1 },
          pagedListThrottling: { rateLimit: 1, burstLimit: 1 },
          dailyQuota: 0.5,
          concurrentLists: 6,
        },
        canary: base.tiers.canary,
      },
      defaultTier: 'premium' as 'standard',
    });
    expect(problems).toEqual([
      'tier standard (21/s, burst 10) exceeds the stage throttling (20/s, burst 40)',
      "tier high's list (6/s, burst 1) exceeds tier high's own (5/s, burst 10)",
      "tier high's list (6/s, burst 1) exceeds the stage's list throttling (2/s, burst 4)",
      "tier high's daily quota must be a whole number of at least 1",
      "tier high's concurrent lists must be a whole number from 1 to one less than the stage's list concurrency (5), so that another key's list still has a slot",
      'the default tier premium is not one of the tiers',
    ]);
  });

  it("refuses a tier whose lists would take every one of the stage's list slots, on every stage, the local one included", () => {
    const tiers = { ...base.tiers, standard: { ...base.tiers.standard, concurrentLists: base.listReservedConcurrency } };
    expect(tierProblems({ ...base, tiers })).toEqual([
      `tier standard's concurrent lists must be a whole number from 1 to one less than the stage's list concurrency (${base.listReservedConcurrency}), so that another key's list still has a slot`,
    ]);
    for (const name of stageNames) expect(listSlotProblems(stages[name])).toEqual([]);
    // Locally: every tier a key can be in leaves a slot for another key.
    expect(listSlotProblems(localStage)).toEqual([]);
    for (const tier of Object.values(localStage.tiers))
      if (tier !== unlimitedTier) expect(tier.concurrentLists).toBeLessThan(localStage.listReservedConcurrency);
    expect(listSlotProblems({ ...localStage, listReservedConcurrency: 1 })).toHaveLength(tierNames.length);
  });

  it('stops a synth whose stage config breaks it, naming the stage and the problem', () => {
    const tiers = { ...base.tiers, high: { ...base.tiers.high, throttling: { rateLimit: 1000, burstLimit: 20 } } };
    const stagesRecord = stages as { staging: typeof base };
    const original = stagesRecord.staging;
    try {
      stagesRecord.staging = { ...original, tiers };
      expect(() => synthApp()).toThrow(/staging stage config: tier high \(1000\/s, burst 20\) exceeds the stage throttling/);
    } finally {
      stagesRecord.staging = original;
    }
  });
});
