/**
 * The requests that provoke each documented answer, and the check that every example of the
 * published document is an answer the service gives: its body (integers compared by their
 * digits), and the headers the example shows. Used against one running service by
 * test/client/generated-clients.test.ts, beside the Prism check (./openapi-prism.ts) that sends
 * the same requests.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { sealCursor } from '../../functions/list-orders-paged/cursor.ts';
import { parseListQuery } from '../../functions/list-orders-paged/list-query.ts';
import { errorRecord, listTooLargeMessage } from '../../shared/errors.ts';
import { integerPattern } from '../../shared/schemas.ts';
import { sendRaw } from './raw-http.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

/** JSON with every integer kept as its digits (a string), so ids are compared exactly. */
export const parseDigits = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && integerPattern.test(context.source) ? context.source : value,
  );

/** docs/openapi.json as committed, integers as their digits. */
export const committedDocument = () => parseDigits(readFileSync(resolve(repoRoot, 'docs/openapi.json'), 'utf8')) as Json;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
export type Answer = { status: number; headers: Headers; text: string };
export type Service = { url: string; key: string; cursorSecrets: string };

/** One documented request: the operation and status it is documented under, and how to send it. */
export type DocumentedRequest = {
  operation: string;
  status: number;
  /** The error code it provokes (its example's name), or the success example's name. */
  example: string;
  method: string;
  /** Under the stage root: `/v1/…`, `/v2/…`. */
  path: string;
  auth?: 'key' | 'unknown key' | 'none';
  /** Sent over a bare socket (malformed HTTP that fetch cannot send): not through a proxy. */
  raw?: true;
};

/** The requests behind the document's examples; `cursor` fills in cursors read from the service first. */
export const documentedRequests = (cursors: { mismatched: string; expired: string }): DocumentedRequest[] => [
  { operation: 'listOrders', status: 200, example: 'default', method: 'GET', path: '/v1/store/orders' },
  { operation: 'listOrders', status: 200, example: 'stringIds', method: 'GET', path: '/v1/store/orders?stringIds=true' },
  { operation: 'listOrders', status: 400, example: 'bad_request', method: 'GET', path: '/v1/store/orders', raw: true },
  { operation: 'listOrders', status: 401, example: 'unauthorized', method: 'GET', path: '/v1/store/orders', auth: 'unknown key' },
  { operation: 'listOrders', status: 404, example: 'route_not_found', method: 'PUT', path: '/v1/store/orders' },
  { operation: 'listOrdersPaged', status: 400, example: 'invalid_query_parameter', method: 'GET', path: '/v2/store/orders?stringIds=yes' },
  { operation: 'listOrdersPaged', status: 400, example: 'invalid_cursor', method: 'GET', path: '/v2/store/orders?cursor=AAAA' },
  {
    operation: 'listOrdersPaged',
    status: 400,
    example: 'cursor_expired',
    method: 'GET',
    path: `/v2/store/orders?cursor=${cursors.expired}`,
  },
  {
    operation: 'listOrdersPaged',
    status: 400,
    example: 'cursor_mismatch',
    method: 'GET',
    path: `/v2/store/orders?status=shipped&cursor=${cursors.mismatched}`,
  },
  { operation: 'listOrdersPaged', status: 401, example: 'unauthorized', method: 'GET', path: '/v2/store/orders', auth: 'none' },
  { operation: 'listOrdersPaged', status: 404, example: 'route_not_found', method: 'OPTIONS', path: '/v2/store/orders' },
  { operation: 'cancelOrder', status: 400, example: 'invalid_order_id', method: 'DELETE', path: '/v1/store/orders/1e3' },
  { operation: 'cancelOrder', status: 404, example: 'order_not_found', method: 'DELETE', path: '/v1/store/orders/99' },
  { operation: 'cancelOrder', status: 404, example: 'route_not_found', method: 'GET', path: '/v1/pets/1' },
  { operation: 'cancelOrder', status: 409, example: 'order_already_shipped', method: 'DELETE', path: '/v1/store/orders/7' },
  { operation: 'cancelOrder', status: 409, example: 'order_not_cancellable', method: 'DELETE', path: '/v1/store/orders/5' },
];

/**
 * Error examples this local run cannot provoke on demand: a list larger than 1.4 million orders,
 * a spent limit, and faults (DynamoDB down, a function that times out: API Gateway's own 504).
 * Their examples are the records the code builds for them (shared/errors.ts), checked as such.
 */
const notProvokedHere = ['list_too_large', 'too_many_requests', 'internal_error', 'service_unavailable', 'gateway_timeout'];

/** The headers of a request of `auth` kind. */
export const headersOf = (service: Service, auth: DocumentedRequest['auth']): Record<string, string> =>
  auth === 'none' ? {} : { Authorization: `Bearer ${auth === 'unknown key' ? 'so_local_not-a-key-of-this-service-000' : service.key}` };

/** Sends one documented request to `root` (the stage root: the service's, or a proxy's). */
export const send = async (service: Service, root: string, request: DocumentedRequest): Promise<Answer> => {
  if (request.raw) {
    // Two Host fields: malformed HTTP (RFC 9112 §3.2), answered by the gateway before any function.
    const { port } = new URL(root);
    const raw = await sendRaw(
      Number(port),
      `${request.method} ${request.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    return { status: raw.status, headers: new Headers([...raw.headers]), text: raw.body };
  }
  const response = await fetch(`${root}${request.path}`, { method: request.method, headers: headersOf(service, request.auth) });
  return { status: response.status, headers: response.headers, text: await response.text() };
};

/** Cursors read from (or sealed for) the service: one made for status=pending, one 25 hours old. */
export const cursorsOf = async (service: Service) => {
  const root = service.url.replace(/\/v1$/, '');
  const page = parseDigits(
    await (await fetch(`${root}/v2/store/orders?status=pending&pageSize=1`, { headers: headersOf(service, 'key') })).text(),
  ) as { nextCursor?: string };
  expect(page.nextCursor, 'a status=pending page with a next one').toBeTypeOf('string');
  const expired = sealCursor(
    JSON.parse(service.cursorSecrets) as { current: string },
    { stage: 'local', binding: parseListQuery({}).binding, startKey: { id: NumberValue.from('1') } },
    new Date(Date.now() - 25 * 3600_000),
  );
  return { mismatched: page.nextCursor!, expired };
};

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A header's example against the header the service sent. */
const expectHeader = (name: string, example: unknown, sent: string | null, where: string) => {
  if (name === 'X-Request-Id') expect(sent, where).toMatch(uuid);
  else if (name === 'Link')
    expect(sent?.replace(/cursor=[A-Za-z0-9_-]+/, 'cursor=…'), where).toBe(String(example).replace(/cursor=[A-Za-z0-9_-]+/, 'cursor=…'));
  else expect(sent, where).toBe(String(example));
};

/** The examples of one response of the document, with `$ref`s of headers resolved. */
const responseOf = (document: Json, operationId: string, status: number) => {
  for (const item of Object.values(document.paths as Json))
    for (const operation of Object.values(item as Json))
      if ((operation as Json).operationId === operationId) return (operation as Json).responses[String(status)] as Json;
  throw new Error(`no operation ${operationId}`);
};
const deref = (document: Json, node: Json): Json =>
  typeof node.$ref === 'string' ? (node.$ref.slice(2).split('/') as string[]).reduce((at: Json, key) => at[key], document) : node;

/**
 * Every example of the document, compared with the service's answer to its request: error
 * records whole, list and page orders as the service lists them, cursors by form, headers by
 * value (X-Request-Id by form). Returns what was compared, for the caller to judge its coverage.
 */
export const checkExamples = async (service: Service) => {
  const document = committedDocument();
  const root = service.url.replace(/\/v1$/, '');
  const requests = documentedRequests(await cursorsOf(service));
  const compared = new Set<string>();
  /** Each error code's record as the service answered it. */
  const provoked = new Map<string, unknown>();
  for (const request of requests) {
    const answer = await send(service, root, request);
    const where = `${request.method} ${request.path}`;
    expect(answer.status, `${where}: ${answer.text.slice(0, 300)}`).toBe(request.status);
    const response = responseOf(document, request.operation, request.status);
    const example = response.content?.['application/json']?.examples?.[request.example] as { value: unknown } | undefined;
    expect(example, `${request.operation} ${request.status} has an example ${request.example}`).toBeDefined();
    const body = parseDigits(answer.text);
    if (request.status >= 400) {
      expect(body, where).toEqual(example!.value);
      provoked.set(request.example, body);
    }
    // A list answer holds the store: each example order is one of its orders, as the service writes it.
    else for (const order of example!.value as unknown[]) expect(body, where).toContainEqual(order);
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const value = deref(document, header as Json).example;
      if (value !== undefined && answer.headers.has(name)) expectHeader(name, value, answer.headers.get(name), `${where}: ${name}`);
    }
    compared.add(`${request.operation} ${request.status} ${request.example}`);
  }
  await checkPageExample(service, document, root, compared);
  await checkOrderIdExamples(service, document, root, compared);
  // A code's example is one record wherever it is listed: the one the service answered above;
  // what this run cannot provoke, the record the code builds for it.
  for (const item of Object.values(document.paths as Json))
    for (const operation of Object.values(item as Json))
      for (const [status, response] of Object.entries((operation as Json).responses as Json)) {
        for (const [name, example] of Object.entries(((response as Json).content?.['application/json']?.examples ?? {}) as Json)) {
          const id = `${(operation as Json).operationId} ${status} ${name}`;
          if (compared.has(id) || Number(status) < 400) continue;
          const code = name as keyof typeof notProvoked;
          if (provoked.has(code)) expect((example as Json).value, id).toEqual(provoked.get(code));
          else {
            expect(notProvokedHere, `${id} is neither provoked nor known to be out of reach`).toContain(code);
            expect((example as Json).value, id).toEqual(parseDigits(JSON.stringify(notProvoked[code])));
          }
          compared.add(id);
        }
      }
  return compared;
};

const notProvoked = {
  list_too_large: errorRecord('list_too_large', listTooLargeMessage(1_500_000, false, { plain: 1_406_250, gzip: 5_625_000 })),
  too_many_requests: errorRecord('too_many_requests'),
  internal_error: errorRecord('internal_error'),
  service_unavailable: errorRecord('service_unavailable'),
  gateway_timeout: errorRecord('gateway_timeout'),
};

/** The v2 page example: its orders are orders of a read of the store, its cursor and Link a real page's in form. */
const checkPageExample = async (service: Service, document: Json, root: string, compared: Set<string>) => {
  const response = responseOf(document, 'listOrdersPaged', 200);
  const example = response.content['application/json'].examples.firstPage.value as { orders: unknown[]; nextCursor: string };
  const read: unknown[] = [];
  let cursor: string | undefined;
  let first: Answer | undefined;
  do {
    const answer = await send(service, root, {
      operation: 'listOrdersPaged',
      status: 200,
      example: 'firstPage',
      method: 'GET',
      path: `/v2/store/orders?pageSize=2&stringIds=true${cursor === undefined ? '' : `&cursor=${cursor}`}`,
    });
    expect(answer.status, answer.text).toBe(200);
    first ??= answer;
    const page = parseDigits(answer.text) as { orders: unknown[]; nextCursor?: string };
    read.push(...page.orders);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  for (const order of example.orders) expect(read).toContainEqual(order);
  // A cursor is sealed with the stage's key and a random IV: compared by form (version byte, IV and tag around the sealed text).
  const real = (parseDigits(first!.text) as { nextCursor: string }).nextCursor;
  const bytes = (text: string) => Buffer.from(text, 'base64url');
  expect(example.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(bytes(example.nextCursor)[0]).toBe(bytes(real)[0]);
  expect(bytes(example.nextCursor).length).toBeGreaterThan(1 + 12 + 16);
  expect(Buffer.from(bytes(example.nextCursor)).toString('base64url')).toBe(example.nextCursor);
  const link = deref(document, response.headers.Link).example as string;
  expectHeader('Link', link, first!.headers.get('link'), 'the first page: Link');
  compared.add('listOrdersPaged 200 firstPage');
};

/** The orderId examples: each is an order the service cancels (204). */
const checkOrderIdExamples = async (service: Service, document: Json, root: string, compared: Set<string>) => {
  const [orderId] = (document.paths as Json)['/v1/store/orders/{orderId}'].delete.parameters as Json[];
  for (const [name, example] of Object.entries(orderId!.examples as Json)) {
    const answer = await send(service, root, {
      operation: 'cancelOrder',
      status: 204,
      example: name,
      method: 'DELETE',
      path: `/v1/store/orders/${(example as { value: string }).value}`,
    });
    expect(answer.status, `orderId example ${name}: ${answer.text}`).toBe(204);
    compared.add(`cancelOrder orderId ${name}`);
  }
};
