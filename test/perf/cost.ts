/**
 * What the service costs on AWS, from what `npm run bench` measured (function durations, bytes,
 * DynamoDB capacity units as DynamoDB Local reports them) and AWS's published list prices.
 * Memory sizes come from infra/function-settings.ts, the ones the stack deploys.
 */
import { functionSettings } from '../../infra/function-settings.ts';
import { type FunctionName } from '../../infra/registry.ts';

/**
 * US East (N. Virginia) list prices in USD, read from the AWS pricing pages in November 2026:
 * aws.amazon.com/lambda/pricing (Arm, first tier; response streaming), /api-gateway/pricing
 * (REST API, first 333 million), /dynamodb/pricing/on-demand, /ec2/pricing/on-demand (data
 * transfer out to the internet, first 10 TB). Free tiers are left out. Update when AWS changes them.
 * Not priced: API Gateway's own charge for streamed responses (its developer guide says response
 * streaming "incurs charges" and points to the pricing page, whose figure was not available here).
 */
export const prices = {
  lambdaPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  /** Per GB of a streamed response beyond its first 6 MB. */
  lambdaStreamingPerGb: 0.008,
  lambdaStreamingFreeBytesPerResponse: 6 * 1024 * 1024,
  apiGatewayPerMillionRequests: 3.5,
  dynamoDbPerMillionReadUnits: 0.125,
  dynamoDbPerMillionWriteUnits: 0.625,
  dataTransferOutPerGb: 0.09,
} as const;

type Prices = { readonly [K in keyof typeof prices]: number };

/** What the bench measured. Durations are one invocation's time in the function, in ms. */
export type CostInputs = {
  readonly cancel: { readonly functionMs: number; readonly writeUnits: number };
  readonly authorizer: { readonly functionMs: number; readonly readUnits: number };
  readonly list: {
    readonly orders: number;
    readonly functionMs: number;
    readonly gzipFunctionMs: number;
    readonly readUnits: number;
    readonly bodyBytes: number;
    readonly gzipBytes: number;
  };
};

export type CostLine = { readonly item: string; readonly quantity: string; readonly usd: number };
export type Scenario = { readonly name: string; readonly lines: readonly CostLine[]; readonly totalUsd: number };

const gb = 1024 ** 3;

/** Lambda bills whole milliseconds at the configured memory: GB-seconds, and the requests. */
const lambdaLines = (fn: FunctionName, invocations: number, functionMs: number, p: Prices): CostLine[] => {
  const memoryGb = functionSettings[fn].memorySize / 1024;
  const gbSeconds = invocations * memoryGb * (Math.ceil(functionMs) / 1000);
  return [
    {
      item: `Lambda ${fn} requests`,
      quantity: `${invocations.toLocaleString('en')}`,
      usd: (invocations / 1e6) * p.lambdaPerMillionRequests,
    },
    {
      item: `Lambda ${fn} duration (${functionSettings[fn].memorySize} MB × ${Math.ceil(functionMs)} ms)`,
      quantity: `${round(gbSeconds)} GB-s`,
      usd: gbSeconds * p.lambdaPerGbSecond,
    },
  ];
};

const round = (value: number) => (value >= 100 ? Math.round(value).toLocaleString('en') : value.toPrecision(3));

const scenario = (name: string, lines: CostLine[]): Scenario => ({ name, lines, totalUsd: lines.reduce((sum, line) => sum + line.usd, 0) });

/** One million cancels (API Gateway, the cancel function, one conditional UpdateItem each). */
const millionCancels = (m: CostInputs, p: Prices) => {
  const n = 1_000_000;
  const writeUnits = n * m.cancel.writeUnits;
  return scenario('1,000,000 cancels', [
    { item: 'API Gateway REST requests', quantity: n.toLocaleString('en'), usd: (n / 1e6) * p.apiGatewayPerMillionRequests },
    ...lambdaLines('cancelOrder', n, m.cancel.functionMs, p),
    {
      item: 'DynamoDB write request units',
      quantity: writeUnits.toLocaleString('en'),
      usd: (writeUnits / 1e6) * p.dynamoDbPerMillionWriteUnits,
    },
  ]);
};

/**
 * Authorizer runs: API Gateway caches an Allow per key for the stage's TTL (300 s), so the
 * authorizer runs at most once per key per 5 minutes, not per request: priced per 100,000 runs.
 */
const authorizerRuns = (m: CostInputs, p: Prices) => {
  const n = 100_000;
  const readUnits = n * m.authorizer.readUnits;
  return scenario('100,000 authorizer runs (cache misses)', [
    ...lambdaLines('authorizer', n, m.authorizer.functionMs, p),
    {
      item: 'DynamoDB read request units',
      quantity: readUnits.toLocaleString('en'),
      usd: (readUnits / 1e6) * p.dynamoDbPerMillionReadUnits,
    },
  ]);
};

/** One full list, scaled linearly to `orders` orders from the measured table when it differs. */
const oneList = (m: CostInputs, p: Prices, orders: number, gzip: boolean) => {
  const scale = orders / m.list.orders;
  const bytes = (gzip ? m.list.gzipBytes : m.list.bodyBytes) * scale;
  const readUnits = m.list.readUnits * scale;
  const streamedBeyondFree = Math.max(0, bytes - p.lambdaStreamingFreeBytesPerResponse);
  return scenario(`one list of ${orders.toLocaleString('en')} orders${gzip ? ', gzip' : ''}`, [
    { item: 'API Gateway REST requests', quantity: '1', usd: p.apiGatewayPerMillionRequests / 1e6 },
    ...lambdaLines('listOrders', 1, (gzip ? m.list.gzipFunctionMs : m.list.functionMs) * scale, p),
    {
      item: 'Lambda response streaming beyond 6 MB',
      quantity: `${(streamedBeyondFree / 1024 / 1024).toFixed(1)} MB`,
      usd: (streamedBeyondFree / gb) * p.lambdaStreamingPerGb,
    },
    { item: 'DynamoDB read request units (Scan)', quantity: round(readUnits), usd: (readUnits / 1e6) * p.dynamoDbPerMillionReadUnits },
    {
      item: 'data transfer out to the internet',
      quantity: `${(bytes / 1024 / 1024).toFixed(1)} MB`,
      usd: (bytes / gb) * p.dataTransferOutPerGb,
    },
  ]);
};

export const costScenarios = (m: CostInputs, p: Prices = prices, listOrders = 100_000): Scenario[] => [
  millionCancels(m, p),
  authorizerRuns(m, p),
  oneList(m, p, listOrders, false),
  oneList(m, p, listOrders, true),
];

const usd = (value: number) => (value === 0 ? '$0' : value >= 0.01 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`);

export const costText = (scenarios: readonly Scenario[]): string[] =>
  scenarios.flatMap((s) => [
    `  ${s.name}: ${usd(s.totalUsd)}`,
    ...s.lines.map((line) => `    ${line.item.padEnd(58)}${line.quantity.padStart(16)}${usd(line.usd).padStart(12)}`),
  ]);
