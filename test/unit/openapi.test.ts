import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOrderId } from '../../functions/cancel-order/order-id.ts';
import { errorExamples } from '../../infra/openapi/examples.ts';
import { type ErrorCode, errorCodes, errorHeaders, gatewayResponseCodes } from '../../shared/errors.ts';
import { generateAuthorizerRoutes, openApiFiles } from '../../infra/openapi/cli.ts';
import { buildOpenApiDocument, type OpenApiDocument, openApiJson } from '../../infra/openapi/document.ts';
import { deprecationHeaders, resourcePath, type Route } from '../../shared/routes.ts';
import { registry, routes } from '../../infra/registry.ts';
import { orderSchema } from '../../shared/schemas.ts';
import { route as deprecatedRoute } from '../fixtures/deprecated-operation/route.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8');

type Json = Record<string, unknown>;
type Response = { description: string; headers?: Record<string, Json>; content?: Record<string, { schema: Json }> };
type OperationObject = { operationId: string; security: unknown; responses: Record<string, Response> } & Json;

const document = buildOpenApiDocument();
const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
  Object.entries(item as Json).map(([method, operation]) => ({ path, method, operation: operation as OperationObject })),
);
const operation = (id: string) => operations.find((entry) => entry.operation.operationId === id)!.operation;
const deref = (node: Json): Json =>
  typeof node.$ref === 'string'
    ? (node.$ref
        .slice(2)
        .split('/')
        .reduce<unknown>((at, key) => (at as Json)[key], document) as Json)
    : node;

describe('committed contract files', () => {
  it('docs/openapi.json is exactly what the code generates', () => {
    expect(read(openApiFiles.document), 'docs/openapi.json is out of date: run `npm run openapi` and commit the result').toBe(
      openApiJson(),
    );
  });

  it("the authorizer's operation routes are the registry's", async () => {
    expect(
      read(openApiFiles.authorizerRoutes),
      `${openApiFiles.authorizerRoutes} is out of date: run \`npm run openapi\` and commit the result`,
    ).toBe(await generateAuthorizerRoutes());
  });
});

describe('the OpenAPI document', () => {
  it("is OpenAPI 3.1 whose interface version is package.json's, the latest release in CHANGELOG.md", () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe(version);
    expect(/^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$/m.exec(read('CHANGELOG.md'))?.[1], 'the first release heading of CHANGELOG.md').toBe(
      version,
    );
    expect(document.info.description).toContain('GET /pets/{petId}` is not served');
  });

  it('names the production, staging and local (npm start) servers, each the stage root that /v1 and /v2 are under, with their variables', () => {
    expect(document.servers?.map((server) => [server.description?.split(/[:.]/)[0], server.url])).toEqual([
      ['Production', 'https://{apiId}.execute-api.{region}.amazonaws.com/production'],
      ['Staging', 'https://{apiId}.execute-api.{region}.amazonaws.com/staging'],
      ['Local', 'http://127.0.0.1:{port}'],
    ]);
    // Each says how the base URL (BaseUrl output, the client's baseUrl) follows from it.
    for (const server of document.servers ?? []) expect(server.description).toContain('is this URL followed by `/v1`');
    // Each server's audience (OWASP API9): the stages serve the API's clients, npm start its developers.
    expect(document.servers?.map((server) => (server as { 'x-internal'?: boolean })['x-internal'])).toEqual([false, false, true]);
    for (const server of document.servers ?? []) {
      for (const name of server.url.match(/\{[^}]+\}/g) ?? []) expect(server.variables?.[name.slice(1, -1)]?.default).toBeTypeOf('string');
      // A generator that fills the defaults gets a URL that parses, and no API of anybody's: AWS's ids are 10 of [a-z0-9].
      const filled = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => String(server.variables![name]!.default));
      expect(new URL(filled).href.replace(/\/$/, '')).toBe(filled);
      expect(server.variables?.apiId?.default ?? 'none').not.toMatch(/^[a-z0-9]{10}$/);
    }
    // The local port is a variable: PORT=0 picks another.
    expect(document.servers?.[2]?.variables?.port?.default).toBe('3000');
  });

  it('has exactly the operations of the route table, with their summary and stability label', () => {
    expect(operations.map(({ method, path, operation }) => [operation.operationId, method.toUpperCase(), path])).toEqual(
      routes.map((route) => [route.operation, route.method, resourcePath(route)]),
    );
    for (const route of routes) {
      expect(operation(route.operation).summary).toBe(route.summary);
      expect(operation(route.operation)['x-stability']).toBe(route.stability);
      expect(operation(route.operation)).not.toHaveProperty('deprecated');
    }
  });

  it('applies the bearer scheme to every operation', () => {
    expect(document.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'API key' });
    for (const { operation } of operations) expect(operation.security).toEqual([{ bearerAuth: [] }]);
  });

  it('lists every status each operation can answer', () => {
    expect(Object.keys(operation('listOrders').responses)).toEqual(['200', '400', '401', '404', '406', '429', '500', '503', '504']);
    expect(Object.keys(operation('listOrdersPaged').responses)).toEqual(['200', '400', '401', '404', '429', '500', '503', '504']);
    expect(Object.keys(operation('cancelOrder').responses)).toEqual(['204', '400', '401', '404', '409', '429', '500', '503', '504']);
  });

  it('lists, per error status, the codes of the error table the handler and the gateway can answer with', () => {
    const codesOf = (id: string, status: string) => {
      const [, narrowing] = operation(id).responses[status]!.content!['application/json']!.schema.allOf as Json[];
      return (narrowing as { properties: { code: { enum: string[] } } }).properties.code.enum;
    };
    expect(codesOf('cancelOrder', '404')).toEqual(['order_not_found', 'route_not_found']);
    expect(codesOf('cancelOrder', '409')).toEqual(['order_already_shipped', 'order_not_cancellable']);
    expect(codesOf('cancelOrder', '400')).toEqual(['bad_request', 'invalid_order_id']);
    // The v1 list reads no parameter it could refuse (stringIds other than true is ignored); v2 checks each.
    expect(codesOf('listOrders', '400')).toEqual(['bad_request']);
    expect(codesOf('listOrdersPaged', '400')).toEqual([
      'bad_request',
      'invalid_query_parameter',
      'invalid_cursor',
      'cursor_expired',
      'cursor_mismatch',
    ]);
    // HEAD, OPTIONS and any method a path has no operation for: 404 route_not_found on every path.
    for (const { operation } of operations) expect(codesOf(operation.operationId, '404')).toContain('route_not_found');
    expect(codesOf('listOrders', '503')).toEqual(['service_unavailable']);
    expect(codesOf('listOrders', '406')).toEqual(['list_too_large']);
    expect(codesOf('cancelOrder', '504')).toEqual(['gateway_timeout']);
    for (const { operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const codes = codesOf(operation.operationId, status);
        for (const code of codes) {
          expect(errorCodes[code as ErrorCode].status, code).toBe(Number(status));
          expect(response.description).toContain(`\`${code}\``);
        }
        // Every answer the gateway gives on its own is documented on every operation.
        for (const code of Object.values(gatewayResponseCodes))
          if (errorCodes[code].status === Number(status)) expect(codes).toContain(code);
      }
    }
  });

  it('gives every error code of every response its example: the record the service answers with', () => {
    for (const { operation } of operations)
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const media = response.content!['application/json']! as { schema: Json; examples: Record<string, { value: unknown }> };
        const codes = ((media.schema.allOf as Json[])[1] as { properties: { code: { enum: string[] } } }).properties.code.enum;
        expect(Object.keys(media.examples), `${operation.operationId} ${status}`).toEqual(codes);
        for (const code of codes) expect(media.examples[code]!.value).toEqual(errorExamples[code as keyof typeof errorExamples].value);
      }
    // Named so that no generated type hides JavaScript's Error.
    expect(Object.keys(document.components?.schemas ?? {})).toEqual(['Order', 'ErrorRecord', 'OrderPage']);
  });

  it('types ids as int64 integers with no safe-integer bounds', () => {
    const order = document.components?.schemas?.Order as { properties: Record<string, Json>; required?: string[] };
    for (const field of ['id', 'petId']) expect(order.properties[field]).toMatchObject({ type: 'integer', format: 'int64' });
    for (const field of ['idStr', 'petIdStr']) expect(order.properties[field]).toMatchObject({ type: 'string', maxLength: 20 });
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/"(minimum|maximum)":\s*-?9007199254740991/);
    expect(order.properties.id).not.toHaveProperty('maximum');
    expect(order.properties.status).toMatchObject({ type: 'string' });
    // As in the specification, no Order field is required.
    expect(order.required).toBeUndefined();
    expect((document.components!.schemas!.ErrorRecord as { required: string[] }).required).toEqual(['code', 'message', 'status']);
  });

  it('documents orderId as text whose pattern and length admit exactly what the service reads', () => {
    const orderId = (operation('cancelOrder').parameters as { name: string; in: string; schema: Json }[])[0]!;
    expect(orderId).toMatchObject({ name: 'orderId', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } });
    const pattern = new RegExp(orderId.schema.pattern as string);
    const documented = (text: string) => text.length <= (orderId.schema.maxLength as number) && pattern.test(text);
    const served = (text: string) => {
      try {
        parseOrderId(text);
        return true;
      } catch {
        return false;
      }
    };
    const around = (bound: bigint) => fc.bigInt({ min: bound - 1000n, max: bound + 1000n });
    const digits = fc.oneof(
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
      around(2n ** 63n),
      around(-(2n ** 63n)),
      around(2n ** 53n),
      around(-(2n ** 53n)),
    );
    const text = fc.oneof(
      digits.map(String),
      fc
        .tuple(fc.constantFrom('', '-', '+', '0', '00', '-0', ' '), fc.nat({ max: 60 }), digits)
        .map(([sign, zeros, value]) => `${sign}${'0'.repeat(zeros)}${value < 0n ? -value : value}`),
      fc.constantFrom(
        '',
        '-',
        '1e3',
        '1.0',
        '+8',
        '0x10',
        '-0',
        '007',
        '９',
        `${'0'.repeat(63)}7`,
        `${'0'.repeat(64)}7`,
        `-${'0'.repeat(63)}`,
      ),
      fc.string({ maxLength: 24 }),
    );
    fc.assert(
      fc.property(text, (candidate) => documented(candidate) === served(candidate)),
      { numRuns: 3000 },
    );
  });

  it('documents quantity with the int32 bounds the code holds stored orders to', () => {
    const quantity = (document.components?.schemas?.Order as { properties: Record<string, Json> }).properties.quantity!;
    expect(quantity).toMatchObject({ type: 'integer', format: 'int32' });
    const accepts = (value: bigint) => orderSchema.shape.quantity.safeParse(value.toString()).success;
    const [minimum, maximum] = [BigInt(quantity.minimum as number), BigInt(quantity.maximum as number)];
    expect([accepts(minimum - 1n), accepts(minimum), accepts(maximum), accepts(maximum + 1n)]).toEqual([false, true, true, false]);
  });

  it('documents the headers of every answer', () => {
    for (const { operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, header]) => [name, deref(header)]));
        expect(headers['X-Request-Id']?.required, `${operation.operationId} ${status}`).toBe(true);
        expect(headers['Cache-Control']).toMatchObject({ required: true, schema: { const: 'no-store' } });
        if (status === '401')
          expect(headers['WWW-Authenticate']).toMatchObject({
            required: true,
            schema: { const: errorHeaders('unauthorized')['WWW-Authenticate'] },
          });
        if (['503', '504'].includes(status)) expect(headers['Retry-After']?.required, `${operation.operationId} ${status}`).toBe(true);
        // A spent quota's 429 (API Gateway's own) may come without it.
        if (status === '429') expect(headers['Retry-After']).toMatchObject({ required: false, schema: { type: 'integer' } });
        // Every header the error table adds to a code of this status (Retry-After on 504 too).
        const codes = (response.content?.['application/json']?.schema.allOf as Json[] | undefined)?.[1] as
          { properties: { code: { enum: ErrorCode[] } } } | undefined;
        for (const code of codes?.properties.code.enum ?? [])
          for (const name of Object.keys(errorHeaders(code)))
            expect(headers[name]?.required, `${code}: ${name}`).toBe(code !== 'too_many_requests' || name !== 'Retry-After');
      }
    }
    const list = operation('listOrders').responses['200']!.headers!;
    expect(list.Vary).toMatchObject({ required: true, schema: { const: 'Accept-Encoding' } });
    expect(list['Content-Encoding']).toMatchObject({ required: false, schema: { enum: ['gzip'] } });
  });

  it('is built from the operations it is given', () => {
    const experimental = registry.operations.map((contract) => ({
      ...contract,
      route: { ...contract.route, stability: 'experimental' as const },
    }));
    const built: OpenApiDocument = buildOpenApiDocument(experimental);
    expect(built.paths?.['/v1/store/orders']?.get?.['x-stability']).toBe('experimental');
    expect(Object.keys(buildOpenApiDocument(registry.operations.slice(1)).paths ?? {})).not.toContain('/v1/store/orders');
  });
});

describe('the error codes of each operation', () => {
  /** The handler module and every module of this repository it imports, transitively. */
  const moduleGraph = (file: string, seen = new Set<string>()): Set<string> => {
    if (seen.has(file)) return seen;
    seen.add(file);
    for (const [, specifier] of read(file).matchAll(/^import\s[^;]*?from\s+'(\.[^']+)'/gms))
      moduleGraph(resolve(dirname(resolve(repoRoot, file)), specifier!).slice(repoRoot.length + 1), seen);
    return seen;
  };
  // A cursor's problem is its error code (cursor-keys.ts answers apiError(error.problem)).
  const raisedCodes = (handlerFile: string) =>
    new Set(
      [...moduleGraph(handlerFile)].flatMap((file) =>
        [...read(file).matchAll(/\b(?:apiError|errorRecord|new CursorError)\(\s*'([a-z_]+)'/g)].map((match) => match[1]),
      ),
    );

  it.each(registry.operations.map((contract) => [contract.name, contract] as const))(
    '%s: the contract lists exactly the codes its code can raise',
    (_, contract) => {
      expect(raisedCodes(contract.function.handlerFile).size).toBeGreaterThan(0);
      expect(new Set(contract.published.errors)).toEqual(raisedCodes(contract.function.handlerFile));
    },
  );
});

describe('deprecation', () => {
  it('every deprecated route has valid dates, a sunset not before its deprecation (RFC 9745 §3) and a successor', () => {
    for (const route of [...routes, deprecatedRoute] as Route[]) {
      if (route.deprecation === undefined) continue;
      const since = Date.parse(route.deprecation.since);
      const sunset = Date.parse(route.deprecation.sunset);
      expect(Number.isNaN(since), `${route.operation} since`).toBe(false);
      expect(Number.isNaN(sunset), `${route.operation} sunset`).toBe(false);
      expect(sunset, `${route.operation}: Sunset earlier than Deprecation`).toBeGreaterThanOrEqual(since);
      expect(route.deprecation.successor).toMatch(/^(\/|https:\/\/)/);
    }
  });

  it('writes Deprecation as an RFC 9745 date, Sunset as an RFC 8594 HTTP-date, and a successor-version Link', () => {
    expect(deprecationHeaders(deprecatedRoute)).toEqual({
      Deprecation: '@1735689600',
      Sunset: 'Thu, 31 Dec 2026 00:00:00 GMT',
      Link: '</v1/store/orders>; rel="successor-version"',
    });
    for (const route of routes) expect(deprecationHeaders(route)).toEqual({});
  });
});
