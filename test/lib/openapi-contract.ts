/**
 * The OpenAPI contract checker of the tests: every response request() (test/lib/local-api.ts)
 * receives is checked against the published document (docs/openapi.json unless a test passes its
 * own), so an answer the document does not describe fails the test that provoked it.
 *
 * Module-level state, kept on purpose: `currentSources` hands the body's number source texts to the
 * synchronous `x-integer` ajv keyword during one validate() call, and two caches (compiled documents,
 * the committed document) spare each test a recompile. Removing them means compiling ajv per response.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { DataValidationCxt, SchemaValidateFunction } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from '../../infra/openapi/document.ts';
import { inInt64Range, integerPattern } from '../../shared/schemas.ts';

type JsonObject = Record<string, unknown>;
type Sources = WeakMap<object, Map<string, string>>;

/**
 * JSON.parse that also records the source text of every number (the reviver's
 * `context.source`), so integer-ness and int64 range are judged from the digits sent, not
 * from a double that has already rounded them.
 */
export const parseJsonWithSources = (text: string): { value: unknown; sources: Sources } => {
  const sources: Sources = new WeakMap();
  const value = JSON.parse(text, function (this: object, key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number' && context?.source !== undefined) {
      const holder = sources.get(this) ?? new Map<string, string>();
      holder.set(key, context.source);
      sources.set(this, holder);
    }
    return value;
  });
  return { value, sources };
};

/**
 * How a JavaScript client reads int64 values exactly: integers beyond 2^53 − 1 become
 * bigint (from their source text), every other number stays a number.
 */
export const parseJsonExact = <T = unknown>(text: string): T =>
  JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && integerPattern.test(context.source)
      ? BigInt(context.source)
      : value,
  );

/** A schema of the document with `$ref`s inlined and `type: integer` narrowed by a source-text check (`x-integer`). */
const prepareSchema = (document: JsonObject, schema: unknown, depth = 0): unknown => {
  if (depth > 64) throw new Error('recursive schema: the contract check inlines $refs and cannot follow it');
  if (Array.isArray(schema)) return schema.map((item) => prepareSchema(document, item, depth + 1));
  if (typeof schema !== 'object' || schema === null) return schema;
  const node = schema as JsonObject;
  if (typeof node.$ref === 'string') return prepareSchema(document, resolvePointer(document, node.$ref), depth + 1);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) out[key] = prepareSchema(document, value, depth + 1);
  if (node.type === 'integer') {
    out.type = 'number';
    delete out.format;
    out['x-integer'] = node.format === 'int64' ? 'int64' : 'integer';
  } else if (Array.isArray(node.type) && node.type.includes('integer')) {
    throw new Error('the contract check does not handle `type: [integer, …]`');
  }
  return out;
};

const resolvePointer = (document: JsonObject, ref: string): unknown => {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, not ${ref}`);
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) node = (node as JsonObject | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
  return node;
};

type CompiledResponse = {
  readonly headers: readonly { name: string; required: boolean; integer: boolean; validate: ValidateFunction }[];
  readonly json?: ValidateFunction;
};
type CompiledOperation = {
  readonly operationId: string;
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly responses: ReadonlyMap<string, CompiledResponse>;
};
type CompiledContract = { readonly ajv: Ajv2020; readonly operations: readonly CompiledOperation[]; readonly error: ValidateFunction };

/** The sources of the body being validated; the `x-integer` keyword reads them (validation is synchronous). */
let currentSources: Sources = new WeakMap();

const createAjv = () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  // OpenAPI annotations that are not JSON Schema validation keywords.
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  const checkInteger: SchemaValidateFunction = (kind: string, data: unknown, _parent, cxt?: DataValidationCxt) => {
    const source = cxt?.parentData === undefined ? undefined : currentSources.get(cxt.parentData)?.get(String(cxt.parentDataProperty));
    const fail = (message: string) => {
      checkInteger.errors = [{ keyword: 'x-integer', message, params: { source } }];
      return false;
    };
    if (typeof data !== 'number') return fail('must be integer');
    // A number with no recorded source (a top-level value) can only be judged as a double.
    const text = source ?? (Number.isSafeInteger(data) ? String(data) : undefined);
    if (text === undefined || !integerPattern.test(text)) return fail(`must be an integer literal (sent: ${source ?? data})`);
    if (kind === 'int64' && !inInt64Range(BigInt(text))) return fail(`must be within int64 (sent: ${text})`);
    return true;
  };
  ajv.addKeyword({ keyword: 'x-integer', schemaType: 'string', errors: 'full', validate: checkInteger });
  return ajv;
};

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const compiledContracts = new WeakMap<object, CompiledContract>();

const compileContract = (document: OpenApiDocument): CompiledContract => {
  const cached = compiledContracts.get(document);
  if (cached !== undefined) return cached;
  const root = document as unknown as JsonObject;
  const ajv = createAjv();
  const compile = (schema: unknown) => ajv.compile(prepareSchema(root, schema) as object);
  const operations: CompiledOperation[] = [];
  for (const [template, pathItem] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem as JsonObject)) {
      if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue;
      const op = operation as { operationId: string; responses: Record<string, JsonObject> };
      const responses = new Map<string, CompiledResponse>();
      for (const [status, response] of Object.entries(op.responses)) {
        const resolved = prepareSchema(root, response) as {
          headers?: Record<string, { required?: boolean; schema: JsonObject }>;
          content?: Record<string, { schema: unknown }>;
        };
        const json = resolved.content?.['application/json'];
        responses.set(status, {
          headers: Object.entries(resolved.headers ?? {}).map(([name, header]) => ({
            name,
            required: header.required === true,
            integer: 'x-integer' in header.schema,
            validate: ajv.compile(header.schema),
          })),
          ...(json === undefined ? {} : { json: ajv.compile(json.schema as object) }),
        });
      }
      const pattern = new RegExp(
        `^${template
          .split(/\{[^}]+\}/)
          .map(escapeRegExp)
          .join('[^/]+')}$`,
      );
      operations.push({ operationId: op.operationId, method: method.toUpperCase(), template, pattern, responses });
    }
  }
  const contract = { ajv, operations, error: compile({ $ref: '#/components/schemas/ErrorRecord' }) };
  compiledContracts.set(document, contract);
  return contract;
};

let committedDocument: OpenApiDocument | undefined;
/** docs/openapi.json as committed (a unit test keeps it equal to what the code generates). */
export const committedOpenApiDocument = (): OpenApiDocument => {
  committedDocument ??= JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as OpenApiDocument;
  return committedDocument;
};

type Contract = ReturnType<typeof compileContract>;
type ContractOperation = Contract['operations'][number];
type Answer = { status: number; headers: Headers; text: string };

/**
 * The ways a response breaks the document; empty when it conforms. The document's paths
 * (`/v1/…`, `/v2/…`) are relative to the servers' base URL, the stage's root. A request that
 * matches no operation may only get the gateway's `route_not_found` record, or a served document.
 */
export const contractViolations = (document: OpenApiDocument, method: string, url: string, response: Answer): string[] => {
  const contract = compileContract(document);
  const verb = method.toUpperCase();
  const { pathname } = new URL(url);
  // The document's paths carry their version prefix (/v1, /v2) under the stage's base URL.
  const apiPath = /^\/v[0-9]+\//.test(pathname) ? pathname : undefined;
  const operation = contract.operations.find((op) => op.method === verb && apiPath !== undefined && op.pattern.test(apiPath));
  return operation === undefined
    ? unmatchedViolations(contract, verb, pathname, response)
    : operationViolations(contract, operation, verb, response);
};

const isJson = (response: Answer) => response.headers.get('content-type')?.split(';')[0]?.trim() === 'application/json';

/** Validates JSON text (a body, or an integer header) with its numbers' source text at hand. */
const validateJson = (contract: Contract, check: ValidateFunction, what: string, text: string): string[] => {
  let parsed: ReturnType<typeof parseJsonWithSources>;
  try {
    parsed = parseJsonWithSources(text);
  } catch {
    return [`${what} is not JSON: ${text.slice(0, 200)}`];
  }
  currentSources = parsed.sources;
  return check(parsed.value) ? [] : [`${what} does not match the document: ${contract.ajv.errorsText(check.errors, { dataVar: what })}`];
};

/** An answer to a request that matches no operation: the served document, or 404 `route_not_found`. */
const unmatchedViolations = (contract: Contract, verb: string, pathname: string, response: Answer): string[] => {
  const where = `${verb} ${pathname} (no operation of the document) answered ${response.status}`;
  // The one other thing the gateway serves: the OpenAPI document itself (GET, no key).
  if (verb === 'GET' && response.status === 200 && isJson(response)) {
    const served = (() => {
      try {
        return parseJsonExact<{ openapi?: unknown } | null>(response.text);
      } catch {
        return null;
      }
    })();
    return typeof served?.openapi === 'string' && served.openapi.startsWith('3.1.')
      ? []
      : [`${where}, and not with an OpenAPI 3.1 document`];
  }
  if (response.status !== 404) return [`${where}; only 404 route_not_found is expected`];
  if (verb === 'HEAD') return [];
  if (!isJson(response)) return [`${where} without an application/json Error record`];
  const problems = validateJson(contract, contract.error, 'body', response.text);
  const code = problems.length === 0 ? parseJsonExact<{ code: string }>(response.text).code : 'route_not_found';
  return [...problems, ...(code === 'route_not_found' ? [] : [`code is ${JSON.stringify(code)}, not "route_not_found"`])].map(
    (problem) => `${where}: ${problem}`,
  );
};

/** An operation's answer: a status it lists, its headers, and its body (or none). */
const operationViolations = (contract: Contract, operation: ContractOperation, verb: string, response: Answer): string[] => {
  const where = `${operation.operationId} (${operation.method} ${operation.template}) answered ${response.status}`;
  const documented = operation.responses.get(String(response.status));
  if (documented === undefined)
    return [`${where}, a status the document does not list for it (documented: ${[...operation.responses.keys()].join(', ')})`];
  const problems: string[] = [];
  for (const header of documented.headers) {
    const value = response.headers.get(header.name);
    if (value === null) {
      if (header.required) problems.push(`required header ${header.name} is missing`);
    } else if (header.integer) {
      problems.push(...validateJson(contract, header.validate, `header ${header.name}`, value));
    } else if (!header.validate(value)) {
      problems.push(`header ${header.name} (${value}) does not match the document: ${contract.ajv.errorsText(header.validate.errors)}`);
    }
  }
  if (documented.json === undefined) {
    if (response.text !== '') problems.push(`the document gives this response no body, yet one was sent: ${response.text.slice(0, 200)}`);
  } else if (verb !== 'HEAD') {
    if (isJson(response)) problems.push(...validateJson(contract, documented.json, 'body', response.text));
    else problems.push(`Content-Type is ${response.headers.get('content-type')}, not application/json`);
  }
  return problems.map((problem) => `${where}: ${problem}`);
};

/** Throws when a response breaks the document (request() calls it on every response). */
export const assertContract = (
  document: OpenApiDocument,
  method: string,
  url: string,
  response: { status: number; headers: Headers; text: string },
) => {
  const problems = contractViolations(document, method, url, response);
  if (problems.length > 0)
    throw new Error(
      `The response breaks the OpenAPI document (docs/openapi.json unless the test gave its own; if the code changed on purpose, run \`npm run openapi\`):\n- ${problems.join('\n- ')}`,
    );
};

/** A `fetch` for openapi-fetch clients that checks every response against the document, as request() does. */
export const contractCheckedFetch =
  (document: OpenApiDocument = committedOpenApiDocument()) =>
  async (input: Request): Promise<Response> => {
    const response = await fetch(input);
    assertContract(document, input.method, input.url, {
      status: response.status,
      headers: response.headers,
      text: await response.clone().text(),
    });
    return response;
  };
