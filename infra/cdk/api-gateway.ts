/**
 * What the stage's REST API says on its own: the JSON access log line of every request, and
 * the gateway responses (answers given without a function) as Error records of the shared table.
 */
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import {
  authorizerContextHeaders,
  errorCodes,
  errorRecord,
  type GatewayResponseType,
  gatewayResponseCodes,
  gatewayResponseHeaders,
} from '../../shared/errors.ts';

/**
 * The access log's fields. Status and latency are bare numbers (they always have one) so Logs
 * Insights can compare and sort them; the rest may be "-" and stays quoted. No header is
 * logged: the Authorization header carries the key. `service` names the stage as the
 * functions' log lines do; the authorizer-failure metric filter takes its dimension from it.
 */
const accessLogFields = (service: string) => ({
  service: JSON.stringify(service),
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
  // BUFFERED or STREAMED; for a streamed list, latency lasts until the last byte, so its first content counts.
  responseTransferMode: '"$context.integration.responseTransferMode"',
  timeToAllHeaders: '"$context.integration.timeToAllHeaders"',
  timeToFirstContent: '"$context.integration.timeToFirstContent"',
  integrationStatus: '"$context.integration.status"',
  integrationLatency: '"$context.integration.latency"',
  integrationError: '"$context.integration.error"',
  // The function invocation's request id: `function_request_id` in that function's log lines.
  integrationRequestId: '"$context.integration.requestId"',
  authorizerStatus: '"$context.authorizer.status"',
  authorizerLatency: '"$context.authorizer.latency"',
  authorizerError: '"$context.authorizer.error"',
  // The authorizer invocation's request id: `function_request_id` in the authorizer's log lines.
  authorizerRequestId: '"$context.authorizer.requestId"',
  principalId: '"$context.authorizer.principalId"',
  errorResponseType: '"$context.error.responseType"',
  errorMessage: '"$context.error.message"',
  userAgent: '"$context.identity.userAgent"',
});

/** The access log format of a stage whose functions log as `service`. */
export const accessLogFormat = (service: string): string =>
  `{${Object.entries(accessLogFields(service))
    .map(([name, value]) => `"${name}":${value}`)
    .join(',')}}`;

/** The field names of the access log (what saved queries and metric filters may read). */
export const accessLogFieldNames = Object.keys(accessLogFields(''));

/** A static gateway response header value is a single-quoted string literal. */
const staticValue = (value: string): string => {
  if (value.includes("'")) throw new Error(`A gateway response header value cannot hold a single quote: ${value}`);
  return `'${value}'`;
};

/**
 * Every answer the gateway gives on its own becomes an Error record of the shared table, with the
 * code's status and headers; `headers` replaces a type's static headers where the stage knows better.
 */
export const addGatewayResponses = (api: apigw.RestApi, headersOf: Partial<Record<GatewayResponseType, Record<string, string>>> = {}) => {
  for (const [type, code] of Object.entries(gatewayResponseCodes)) {
    const body = JSON.stringify(errorRecord(code));
    // The body is sent as a template in which $ starts a variable: the records must not hold one.
    if (body.includes('$')) throw new Error(`The ${code} record cannot be a gateway response template: it holds "$"`);
    const headers = {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      ...gatewayResponseHeaders(type as GatewayResponseType),
      ...headersOf[type as GatewayResponseType],
    };
    api.addGatewayResponse(`GatewayResponse-${type}`, {
      type: apigw.ResponseType.of(type),
      statusCode: String(errorCodes[code].status),
      responseHeaders: {
        ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, staticValue(value)])),
        // Values of the authorization's context (a spent quota's Retry-After), mapped as context variables.
        ...Object.fromEntries(
          Object.entries(authorizerContextHeaders[type as GatewayResponseType] ?? {}).map(([name, key]) => [
            name,
            `context.authorizer.${key}`,
          ]),
        ),
        'X-Request-Id': 'context.requestId',
      },
      templates: { 'application/json': body },
    });
  }
};
