/**
 * The client package and the OpenAPI document agree: its generated types are the document's,
 * its int64 fields are the document's int64 fields, every error code the document lists is one
 * it knows (with a subclass for its status), its operations and success statuses are the
 * document's, and, once the document describes the v2 list, its query and page are the client's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientDefaults, int64Fields, serviceErrorCodes, StoreOrdersError } from '../../client/src/index.ts';
import { errorClassFor } from '../../client/src/errors.ts';
import { generateClientTypes, openApiFiles } from '../../infra/openapi/cli.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
type Json = Record<string, unknown>;

/** Every OpenAPI document the repository publishes under docs/ (today docs/openapi.json). */
const documents = readdirSync(join(repoRoot, 'docs'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(join(repoRoot, 'docs', name), 'utf8')) as Json)
  .filter((document) => typeof document.openapi === 'string');

const resolveRef = (document: Json, node: unknown): Json => {
  const ref = (node as { $ref?: string }).$ref;
  if (ref === undefined) return node as Json;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (at as Json)[key], document) as Json;
};

/** Each operation with its full path (the server's path prefix, e.g. /v1, and the path). */
const operations = documents.flatMap((document) => {
  // The version prefix every server URL ends in (…/production/v1, http://127.0.0.1:3000/v1).
  const serverPath = new URL((document.servers as { url: string }[])[0]!.url.replace(/\{\w+\}/g, 'x')).pathname;
  const prefix = /\/v\d+$/.exec(serverPath)?.[0] ?? '';
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
      .map(([method, operation]) => ({ document, path: `${prefix}${path}`, method, operation: operation as Json })),
  );
});
const operation = (method: string, path: string) => operations.find((candidate) => candidate.method === method && candidate.path === path);

/** The error codes each response of the documents lists, with their statuses. */
const documentedErrors = operations.flatMap(({ document, operation }) =>
  Object.entries(operation.responses as Record<string, unknown>).flatMap(([status, response]) => {
    const schema = (resolveRef(document, response).content as Record<string, { schema?: unknown }> | undefined)?.['application/json']
      ?.schema;
    const codes = collectEnums(document, schema, 'code');
    return codes.map((code) => ({ status: Number(status), code }));
  }),
);

/** The enum values of property `name` anywhere in a schema (allOf/oneOf/properties). */
function collectEnums(document: Json, node: unknown, name: string): string[] {
  if (node === undefined || node === null || typeof node !== 'object') return [];
  const schema = resolveRef(document, node);
  const own = ((schema.properties as Json | undefined)?.[name] as { enum?: string[]; const?: string } | undefined) ?? {};
  const here = [...(own.enum ?? []), ...(own.const === undefined ? [] : [own.const])];
  const nested = ['allOf', 'oneOf', 'anyOf'].flatMap((key) =>
    ((schema[key] as unknown[]) ?? []).flatMap((part) => collectEnums(document, part, name)),
  );
  return [...here, ...nested];
}

/** The v2 list's codes, from the contract: in the document once it describes v2. */
const v2Codes = ['invalid_query_parameter', 'invalid_cursor', 'cursor_expired', 'cursor_mismatch'];
/** The v2 list: the GET of store/orders that takes a cursor, wherever the document puts it (its own document, or a path under /v2). */
const v2List = operations.find(
  ({ document, method, path, operation: candidate }) =>
    method === 'get' &&
    path.endsWith('/store/orders') &&
    ((candidate.parameters as unknown[] | undefined) ?? []).some(
      (parameter) => (resolveRef(document, parameter) as { name?: string }).name === 'cursor',
    ),
);

/**
 * The most bytes a JSON value of `schema` takes, compact, as the document bounds it: int64 and
 * bounded integers at their longest, a string at its `maxLength` with every code point written as
 * the longest escape (a surrogate pair, `\uXXXX\uXXXX`: 12 bytes), an object's every property, an
 * array at its `maxItems`. A value the document leaves unbounded throws.
 */
const largestJson = (document: Json, node: unknown): number => {
  const schema = resolveRef(document, node) as Json & { type?: string; properties?: Record<string, unknown>; items?: unknown };
  const longest = (...numbers: unknown[]) => Math.max(...numbers.map((number) => String(number).length));
  if (schema.type === 'integer' && schema.format === 'int64') return longest(-(2n ** 63n));
  if (schema.type === 'integer' && schema.minimum !== undefined && schema.maximum !== undefined)
    return longest(schema.minimum, schema.maximum);
  if (schema.type === 'boolean') return 'false'.length;
  if (schema.type === 'string' && typeof schema.maxLength === 'number') return 2 + 12 * schema.maxLength;
  if (schema.type === 'array' && typeof schema.maxItems === 'number')
    return 2 + schema.maxItems * largestJson(document, schema.items) + (schema.maxItems - 1);
  if (schema.type === 'object' || schema.properties !== undefined) {
    const members = Object.entries(schema.properties ?? {}).map(
      ([name, property]) => `"${name}":`.length + largestJson(document, property),
    );
    return 2 + members.reduce((sum, size) => sum + size, 0) + members.length - 1;
  }
  throw new Error(`the document leaves ${JSON.stringify(schema).slice(0, 80)} unbounded`);
};

describe('the client package and the OpenAPI document', () => {
  it('sizes its bounds at about ten times the largest order and page the document allows', () => {
    const { document } = operation('get', '/v1/store/orders')!;
    const schemas = (document.components as { schemas: Json }).schemas;
    // idStr and petIdStr come only with stringIds=true, which this client never sends (it reads ids exactly).
    const { idStr, petIdStr, ...asRead } = (schemas.Order as { properties: Json }).properties;
    expect([idStr, petIdStr]).not.toContain(undefined);
    const Order = { ...(schemas.Order as Json), properties: asRead };
    const asSent = { ...document, components: { ...(document.components as Json), schemas: { ...schemas, Order } } };
    const order = largestJson(asSent, Order);
    const page = largestJson(asSent, schemas.OrderPage);
    expect(order).toBeGreaterThan(1000);
    expect(page).toBeGreaterThan(1000 * order);
    for (const [bound, largest] of [
      [clientDefaults.maxOrderBytes, order],
      [clientDefaults.maxPageBytes, page],
    ] as const) {
      expect(bound / largest).toBeGreaterThanOrEqual(8);
      expect(bound / largest).toBeLessThanOrEqual(16);
    }
  });

  it(`${openApiFiles.packageTypes} is generated from the document (int64 as bigint)`, async () => {
    expect(
      readFileSync(join(repoRoot, openApiFiles.packageTypes), 'utf8'),
      `${openApiFiles.packageTypes} is out of date: run \`npm run openapi\` and commit the result`,
    ).toBe(await generateClientTypes());
  });

  it("reads as bigint exactly the Order's int64 fields", () => {
    const { document } = operation('get', '/v1/store/orders')!;
    const order = resolveRef(document, (document.components as { schemas: Json }).schemas.Order);
    const int64 = Object.entries(order.properties as Record<string, { format?: string }>)
      .filter(([, property]) => property.format === 'int64')
      .map(([name]) => name);
    expect([...int64Fields].sort()).toEqual(int64.sort());
  });

  it('sends the operations the document has, expecting their success statuses', () => {
    expect(Object.keys(operation('get', '/v1/store/orders')?.operation.responses as Json)).toContain('200');
    expect(Object.keys(operation('delete', '/v1/store/orders/{orderId}')?.operation.responses as Json)).toContain('204');
  });

  it('knows every error code the document lists, each with a subclass of its status', () => {
    expect(documentedErrors.length).toBeGreaterThan(10);
    const known: readonly string[] = serviceErrorCodes;
    expect(documentedErrors.filter(({ code }) => !known.includes(code))).toEqual([]);
    expect(documentedErrors.filter(({ status, code }) => errorClassFor(status, code) === StoreOrdersError)).toEqual([]);
    // Codes the client knows and the document does not: only v2's, and only while the document lacks v2.
    const documented = new Set(documentedErrors.map(({ code }) => code));
    expect(known.filter((code) => !documented.has(code))).toEqual(v2List === undefined ? v2Codes : []);
  });

  // The v2 list enters the document when it is built (docs/api.md): from then on this checks it.
  it.runIf(v2List !== undefined)("sends the v2 list's query parameters and reads its page", () => {
    const { document, operation: list } = v2List!;
    const parameters = (list.parameters as unknown[]).map(
      (parameter) => resolveRef(document, parameter) as { name: string; in: string; schema: unknown },
    );
    // stringIds is for clients whose parser rounds: this one reads ids exactly and never sends it.
    expect(
      parameters
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => parameter.name)
        .sort(),
    ).toEqual(['cursor', 'pageSize', 'part', 'parts', 'shipDateFrom', 'shipDateTo', 'status', 'stringIds']);
    const status = resolveRef(document, parameters.find((parameter) => parameter.name === 'status')!.schema);
    expect(collectEnums(document, { properties: { status } }, 'status').sort()).toEqual(['cancelled', 'pending', 'shipped']);
    const page = resolveRef(
      document,
      (resolveRef(document, (list.responses as Json)['200']).content as Record<string, { schema: unknown }>)['application/json']!.schema,
    );
    expect(Object.keys(page.properties as Json).sort()).toEqual(['nextCursor', 'orders']);
    expect((page.required as string[] | undefined) ?? []).not.toContain('nextCursor');
  });
});
