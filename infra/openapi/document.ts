/**
 * The OpenAPI 3.1 document of the API, built from each operation's route and its part of the
 * published contract (its contract module, collected by infra/registry.ts), the wire schemas
 * (infra/wire-forms.ts) and the error table (shared/errors.ts) the code itself uses. `npm run openapi`
 * (infra/openapi/cli.ts) writes it to docs/openapi.json; a test fails when the file is out of
 * date, and the local gateway serves the same document at GET /v1/openapi.json.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import type { OperationContract } from '../function-contract.ts';
import { registry } from '../registry.ts';
import { type ErrorCode, errorCodes, errorHeaders, gatewayResponseCodes } from '../../shared/errors.ts';
import { type HeaderObject, type PublishedOperation, errorWireSchema } from '../wire-forms.ts';
import { apiVersion, deprecationHeaders, resourcePath, type Route } from '../../shared/routes.ts';
import { errorExamples, requestIdExample } from './examples.ts';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * The version of the interface description: package.json's `version`, so one bump (recorded in
 * CHANGELOG.md) versions the code and its document together. The path prefix carries the API version.
 */
export const documentVersion = z
  .object({ version: z.string().regex(/^\d+\.\d+\.\d+(-[\w.]+)?$/, 'must be a semantic version') })
  .parse(JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8'))).version;

/** What the document reads of an operation's contract: its route and its part of the published contract. */
export type PublishedRoute = Pick<OperationContract, 'route' | 'published'>;

/**
 * Codes the API gateway answers with on its own for a route (gateway response table). "No such
 * route" reaches every path: a method the path has no operation for (HEAD, OPTIONS, PUT, …), and
 * on a templated path an empty `{orderId}`.
 */
export const gatewayErrorCodes = (_route: Route): ErrorCode[] => [...new Set<ErrorCode>(Object.values(gatewayResponseCodes))];

const codesByStatus = (codes: Iterable<ErrorCode>) => {
  const byStatus = new Map<number, ErrorCode[]>();
  // Table order, so the document does not depend on the order codes were listed in.
  for (const code of Object.keys(errorCodes) as ErrorCode[]) {
    if (![...codes].includes(code)) continue;
    const status = errorCodes[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
};

/** The error codes each status of a route can carry: the handler's and the gateway's. */
export const routeErrorCodes = (route: Route, contract: PublishedOperation): Map<number, ErrorCode[]> =>
  codesByStatus(new Set([...contract.errors, ...gatewayErrorCodes(route)]));

/** Retry-After: present on every answer of its status (`required`), or only on most (a 429's). */
function retryAfter(required: boolean, description: string): HeaderObject {
  return { required, description, schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 }, example: 1 };
}

/** Headers shared by many responses, as components (referenced, not repeated). */
const sharedHeaders = {
  'X-Request-Id': {
    required: true,
    description: 'Identifies the request in the service’s logs; quote it when reporting a problem.',
    schema: { type: 'string', minLength: 1 },
    example: requestIdExample,
  },
  'Cache-Control': {
    required: true,
    description: 'Always `no-store`: answers are never cached.',
    schema: { type: 'string', const: 'no-store' },
    example: 'no-store',
  },
  'WWW-Authenticate': {
    required: true,
    description: 'The authentication scheme to use: `Bearer` (RFC 6750).',
    // Exactly what errorHeaders (shared/errors.ts) sends, from the functions and from the gateway.
    schema: { type: 'string', const: 'Bearer' },
    example: 'Bearer',
  },
  'Retry-After': retryAfter(
    true,
    "Seconds to wait before retrying (delay-seconds, RFC 9110 §10.2.3): 1 while busy or after DynamoDB's retries, 60 while the status filter's index is not ready.",
  ),
  // A 429's may be missing: the spent quota's value reaches API Gateway's own 429 in a way AWS does not document.
  'Retry-After-429': retryAfter(
    false,
    'Seconds to wait before retrying (delay-seconds, RFC 9110 §10.2.3): 1 after a rate or burst limit or with lists running at once, and once ' +
      'a key has used its daily quota the seconds until the quota starts afresh at 00:00 UTC (counted when the key was last authorized, so up ' +
      "to 5 minutes more than the exact wait, never less). That last value is mapped into API Gateway's own 429 in a way AWS does not " +
      'document: a 429 may come without it; back off then, as after a failed connection.',
  ),
} as const satisfies Record<string, HeaderObject>;

const headerRef = (name: keyof typeof sharedHeaders) => ({ $ref: `#/components/headers/${name}` });
const envelopeHeaders = { 'X-Request-Id': headerRef('X-Request-Id'), 'Cache-Control': headerRef('Cache-Control') };

/** RFC 9745 / RFC 8594 headers of a deprecated route; required where only the handler answers. */
const deprecationHeaderObjects = (route: Route, required: boolean): Record<string, HeaderObject> => {
  if (route.deprecation === undefined) return {};
  const where = required ? '' : ' Sent when the service answers; the gateway’s own answers (401, 429, …) do not carry it.';
  // Each value is fixed by the route table: documented as the exact text the route sends.
  const sent = deprecationHeaders(route);
  return {
    Deprecation: {
      required,
      description: `RFC 9745: the operation is deprecated since this time (\`@\` + Unix seconds).${where}`,
      schema: { type: 'string', const: sent.Deprecation },
    },
    Sunset: {
      required,
      description: `RFC 8594: the HTTP-date after which the operation stops answering.${where}`,
      schema: { type: 'string', const: sent.Sunset },
    },
    Link: {
      required,
      description: `The operation’s successor, \`rel="successor-version"\`.${where}`,
      schema: { type: 'string', const: sent.Link },
    },
  };
};

/** The headers errorHeaders (shared/errors.ts) adds to the codes of one status, as references. */
const errorHeaderRefs = (codes: readonly ErrorCode[]): Record<string, { $ref: string }> => {
  const names = new Set(codes.flatMap((code) => Object.keys(errorHeaders(code))));
  return Object.fromEntries(
    [...names].map((name) => {
      // A header only some codes of the status carry could not be `required`: decide it here first.
      if (!codes.every((code) => name in errorHeaders(code))) throw new Error(`${name} is sent with only some codes of ${codes}`);
      if (!(name in sharedHeaders)) throw new Error(`errorHeaders sends ${name}, which has no header component`);
      // A 429 is also API Gateway's, whose spent-quota answer may lack Retry-After (docs/api.md#limits).
      const component = name === 'Retry-After' && codes.includes('too_many_requests') ? 'Retry-After-429' : name;
      return [name, headerRef(component as keyof typeof sharedHeaders)];
    }),
  );
};

const errorResponse = (route: Route, contract: PublishedOperation, status: number, codes: readonly ErrorCode[]): ResponseConfig => {
  const gateway = gatewayErrorCodes(route);
  const source = (code: ErrorCode) =>
    contract.errors.includes(code) ? (gateway.includes(code) ? ' (service or API gateway)' : '') : ' (API gateway)';
  const lines = codes.map((code) => `- \`${code}\`${source(code)}: ${errorCodes[code].message}`);
  return {
    description: `Error record. Possible \`code\` values:\n\n${lines.join('\n')}`,
    headers: { ...envelopeHeaders, ...errorHeaderRefs(codes), ...deprecationHeaderObjects(route, false) },
    content: {
      'application/json': {
        examples: Object.fromEntries(codes.map((code) => [code, errorExampleOf(code)])),
        schema: z.intersection(
          errorWireSchema,
          z.object({
            code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
            // Only a `const`: Error.status gives the type, format and bounds. (z.literal would add
            // `type`, and the OWASP ruleset would then ask for format and bounds once more.)
            status: z
              .unknown()
              .refine((value) => value === status)
              .meta({ const: status }),
          }),
        ),
      },
    },
  };
};

const errorExampleOf = (code: ErrorCode) => {
  if (code === 'misdirected_request') throw new Error('misdirected_request is the local gateway’s alone: no route lists it');
  return errorExamples[code];
};

const pathParameterNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);

const deprecationNote = (route: Route) =>
  route.deprecation === undefined
    ? ''
    : `\n\n**Deprecated** since ${route.deprecation.since}; it stops answering after ${route.deprecation.sunset} ` +
      `(\`Sunset\` header). Use \`${route.deprecation.successor}\` instead.`;

const requestOf = (
  names: readonly string[],
  parameters: Readonly<Record<string, z.ZodType>>,
  query: Readonly<Record<string, z.ZodType>> | undefined,
): Pick<RouteConfig, 'request'> => {
  const request: NonNullable<RouteConfig['request']> = {
    ...(names.length === 0 ? {} : { params: z.object(Object.fromEntries(names.map((name) => [name, parameters[name]!]))) }),
    ...(query === undefined ? {} : { query: z.object(query) }),
  };
  return Object.keys(request).length === 0 ? {} : { request };
};

const operationOf = ({ route, published: contract }: PublishedRoute): RouteConfig => {
  const names = pathParameterNames(route.path);
  const parameters = contract.pathParameters ?? {};
  for (const name of names)
    if (parameters[name] === undefined) throw new Error(`${route.operation}: no schema for path parameter {${name}}`);
  const success: ResponseConfig = {
    description: contract.success.description,
    headers: { ...envelopeHeaders, ...contract.success.headers, ...deprecationHeaderObjects(route, true) },
    ...(contract.success.body === undefined
      ? {}
      : {
          content: {
            'application/json': {
              schema: contract.success.body,
              ...(contract.success.examples && { examples: contract.success.examples }),
            },
          },
        }),
  };
  const responses: RouteConfig['responses'] = { [contract.success.status]: success };
  for (const [status, codes] of [...routeErrorCodes(route, contract)].sort(([a], [b]) => a - b))
    responses[status] = errorResponse(route, contract, status, codes);
  return {
    method: route.method.toLowerCase() as RouteConfig['method'],
    path: resourcePath(route),
    operationId: route.operation,
    summary: route.summary,
    description: `${contract.description}${deprecationNote(route)}`,
    tags: ['orders'],
    security: [{ bearerAuth: [] }],
    ...(route.deprecation === undefined ? {} : { deprecated: true }),
    'x-stability': route.stability,
    ...requestOf(names, parameters, contract.queryParameters),
    responses,
  };
};

/** One base URL, one meaning, everywhere: a server URL is the stage root, the base URL that root plus /v1. */
const baseUrlNote = 'The stage’s base URL (the stack’s `BaseUrl` output, the client library’s `baseUrl`) is this URL followed by `/v1`.';

// `x-internal` names each server's audience (OWASP API9): the stages serve the API's clients;
// the local server is for the developers of this service.
const stageServer = (stage: 'production' | 'staging', description: string) => ({
  url: `https://{apiId}.execute-api.{region}.amazonaws.com/${stage}`,
  description: `${description}: the stage root (paths carry their version: /v1/…, /v2/…). ${baseUrlNote}`,
  'x-internal': false,
  variables: {
    // A placeholder no AWS API can have (AWS assigns 10 lowercase letters and digits): a client left
    // with the default reaches nobody's API, so its key goes nowhere it should not.
    apiId: {
      default: 'your-api-id',
      description: `The id of the ${stage} stack’s REST API: the first label of the stack’s \`BaseUrl\` output (10 lowercase letters and digits).`,
    },
    region: { default: 'us-east-1', description: `The AWS region the ${stage} stack is deployed to (in the \`BaseUrl\` output too).` },
  },
});

const documentDescription = `The orders of a pet store: list every order, cancel a pending one.

Every operation requires an API key sent as a bearer token: \`Authorization: Bearer <API_KEY>\`.

Every error answer, from the service or from the API gateway itself, is an \`ErrorRecord\` whose \`status\` equals the HTTP status; each response lists the \`code\` values it can carry, each with an example. Every answer carries \`X-Request-Id\` and \`Cache-Control: no-store\`.

Order ids and pet ids are int64 and exceed 2^53 − 1: read them without rounding them through a JavaScript \`number\`, or ask with \`stringIds=true\` and read \`idStr\` and \`petIdStr\`, the same digits as strings. The \`orderId\` path parameter is text: send the digits you read.

Requests: a path is matched as sent, a trailing slash ignored (\`/v1/store/orders/\` is the list); \`.\` and \`..\` segments are not resolved. A method that no operation of a path has, HEAD and OPTIONS included, answers 404 \`route_not_found\` (no CORS: the API is for servers, not web pages). A query parameter sent twice counts once, with its last value; parameters an operation does not read are ignored.

The API version is the path prefix: \`/${apiVersion}\` (stable) and \`/v2\` (the order list in pages, filtered, resumable and splittable: \`experimental\`), served side by side. Changes within a version are additive (new optional fields, new operations); an \`experimental\` operation may still change or go in a later release, announced in the changelog. An operation's \`x-stability\` is \`stable\`, \`beta\` or \`experimental\`; a deprecated operation is marked \`deprecated\` and answers with \`Deprecation\` (RFC 9745), \`Sunset\` (RFC 8594) and \`Link\` (successor) headers. \`GET /pets/{petId}\` is not served by this service.`;

/**
 * The OpenAPI 3.1 document of the API for a list of operations (the registry's by default; tests
 * pass lists with operations of their own).
 */
export const buildOpenApiDocument = (operations: readonly PublishedRoute[] = registry.operations): OpenApiDocument => {
  const paths = new OpenAPIRegistry();
  paths.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    // A hint for generators and readers (RFC 6750 leaves the token's form to the service): not a JWT.
    bearerFormat: 'API key',
    description:
      'An API key of the stage (the stage prefix, such as `so_live_`, and 43 base64url characters), sent as `Authorization: Bearer <API_KEY>`. ' +
      'A missing, unknown or revoked key answers 401.',
  });
  for (const [name, header] of Object.entries(sharedHeaders)) paths.registerComponent('headers', name, header);
  for (const operation of operations) paths.registerPath(operationOf(operation));
  const document = new OpenApiGeneratorV31(paths.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Store Orders Service', version: documentVersion, description: documentDescription },
    servers: [
      stageServer('production', 'Production'),
      stageServer('staging', 'Staging'),
      {
        url: 'http://127.0.0.1:{port}',
        description: `Local: \`npm start\` on this machine. ${baseUrlNote}`,
        'x-internal': true,
        variables: {
          port: {
            default: '3000',
            description:
              'The port `npm start` listens on: 3000 unless `PORT` sets another (`PORT=0` picks a free one; the start prints it).',
          },
        },
      },
    ],
    tags: [{ name: 'orders', description: 'Orders of the store.' }],
  });
  // The generator always emits these; empty they only add noise.
  if (document.webhooks !== undefined && Object.keys(document.webhooks).length === 0) delete document.webhooks;
  if (document.components?.parameters !== undefined && Object.keys(document.components.parameters).length === 0)
    delete document.components.parameters;
  return document;
};

/** The document as committed in docs/openapi.json (stable key order, two-space indent, final newline). */
export const openApiJson = (document: OpenApiDocument = buildOpenApiDocument()) => `${JSON.stringify(document, null, 2)}\n`;

let served: string | undefined;
/** The document as the local gateway serves it at GET /v1/openapi.json (built once). */
export const servedOpenApiJson = (): string => {
  served ??= openApiJson();
  return served;
};
