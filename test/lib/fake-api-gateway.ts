/**
 * API Gateway's API keys and usage plans as the key tool sees them, held in memory behind
 * aws-sdk-client-mock (no local API Gateway exists). It keeps the rules the tool depends on:
 * an API key may be in only one usage plan of a stage (ConflictException otherwise), deleting
 * an absent plan key or API key is a NotFoundException, and `nameQuery` matches by prefix.
 * `failOnce(command)` makes the next call of a command fail, for the halfway failures.
 */
import {
  APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';

type Plan = { id: string; name: string; stage: string; keys: Set<string> };
type Key = { id: string; name: string; value: string };
type CommandName = 'CreateApiKey' | 'CreateUsagePlanKey' | 'DeleteUsagePlanKey' | 'DeleteApiKey';

const metadata = { $metadata: {} };

type Mock = AwsClientStub<APIGatewayClient>;

/** What the fake holds, and what the test asked of it. */
type World = {
  readonly plans: Plan[];
  readonly keys: Map<string, Key>;
  readonly failures: Map<CommandName, Error>;
  /** Hooks run before a command changes anything (e.g. to look at the table at that moment). */
  readonly before: Map<CommandName, () => Promise<void>>;
  nextId: number;
  lastKeyName?: string;
  plansDeployed: boolean;
};

export const fakeApiGateway = (plans: { name: string; stage: string }[]) => {
  const mock = mockClient(APIGatewayClient);
  const world: World = {
    plans: plans.map((plan, i): Plan => ({ id: `plan${i}`, ...plan, keys: new Set() })),
    keys: new Map(),
    failures: new Map(),
    before: new Map(),
    nextId: 0,
    plansDeployed: true,
  };
  answerReads(mock, world);
  answerApiKeys(mock, world);
  answerPlanKeys(mock, world);
  return {
    mock,
    /** The API key of this name, with the names of the plans it is in. */
    key: (name: string) => {
      const key = [...world.keys.values()].find((candidate) => candidate.name === name);
      return key === undefined
        ? undefined
        : { ...key, plans: world.plans.filter((plan) => plan.keys.has(key.id)).map((plan) => plan.name) };
    },
    keyCount: () => world.keys.size,
    /** The name of the API key created last. */
    lastKeyName: () => world.lastKeyName,
    /** Whether the stack's usage plans exist (false: the stage is not deployed yet). */
    deployPlans: (deployed: boolean) => void (world.plansDeployed = deployed),
    failOnce: (command: CommandName, message = 'Rate exceeded') => world.failures.set(command, new Error(message)),
    before: (command: CommandName, hook: () => Promise<void>) => world.before.set(command, hook),
    restore: () => mock.restore(),
  };
};

/** Runs the command's `before` hook, then fails it once if `failOnce` asked so. */
const guard = async (world: World, name: CommandName) => {
  await world.before.get(name)?.();
  const failure = world.failures.get(name);
  if (failure === undefined) return;
  world.failures.delete(name);
  throw failure;
};

const planOf = (world: World, id: string | undefined) => {
  const plan = world.plans.find((candidate) => candidate.id === id);
  if (plan === undefined) throw new NotFoundException({ message: `Invalid Usage Plan ID specified`, ...metadata });
  return plan;
};

/** GetUsagePlans (none before the stage is deployed) and GetApiKeys (`nameQuery` by prefix). */
const answerReads = (mock: Mock, world: World) => {
  mock.on(GetUsagePlansCommand).callsFake((input: { keyId?: string }) => ({
    items: world.plans
      .filter((plan) => world.plansDeployed && (input.keyId === undefined || plan.keys.has(input.keyId)))
      .map(({ id, name, stage }) => ({ id, name, apiStages: [{ apiId: 'api1', stage }] })),
  }));
  mock.on(GetApiKeysCommand).callsFake((input: { nameQuery?: string; includeValues?: boolean }) => ({
    items: [...world.keys.values()]
      .filter((key) => key.name.startsWith(input.nameQuery ?? ''))
      .map((key) => ({ id: key.id, name: key.name, enabled: true, ...(input.includeValues === true ? { value: key.value } : {}) })),
  }));
};

/** CreateApiKey (a value already used is a ConflictException) and DeleteApiKey (out of its plans too). */
const answerApiKeys = (mock: Mock, world: World) => {
  mock.on(CreateApiKeyCommand).callsFake(async (input: { name: string; value: string }) => {
    await guard(world, 'CreateApiKey');
    if ([...world.keys.values()].some((key) => key.value === input.value))
      throw new ConflictException({ message: 'API Key already exists', ...metadata });
    const key = { id: `apikey${++world.nextId}`, name: input.name, value: input.value };
    world.keys.set(key.id, key);
    world.lastKeyName = key.name;
    return { id: key.id, name: key.name, value: key.value, enabled: true };
  });
  mock.on(DeleteApiKeyCommand).callsFake(async (input: { apiKey: string }) => {
    await guard(world, 'DeleteApiKey');
    if (!world.keys.delete(input.apiKey)) throw new NotFoundException({ message: 'Invalid API Key identifier', ...metadata });
    for (const plan of world.plans) plan.keys.delete(input.apiKey);
    return {};
  });
};

/** CreateUsagePlanKey (one plan per key and stage) and DeleteUsagePlanKey. */
const answerPlanKeys = (mock: Mock, world: World) => {
  mock.on(CreateUsagePlanKeyCommand).callsFake(async (input: { usagePlanId: string; keyId: string }) => {
    await guard(world, 'CreateUsagePlanKey');
    const plan = planOf(world, input.usagePlanId);
    if (!world.keys.has(input.keyId)) throw new NotFoundException({ message: 'Invalid API Key identifier specified', ...metadata });
    // One plan per API key and stage (AWS, "Usage plans and API keys for REST APIs").
    if (world.plans.some((other) => other.stage === plan.stage && other.keys.has(input.keyId)))
      throw new ConflictException({ message: 'Usage Plan already contains API key for this stage', ...metadata });
    plan.keys.add(input.keyId);
    return { id: input.keyId, type: 'API_KEY' };
  });
  mock.on(DeleteUsagePlanKeyCommand).callsFake(async (input: { usagePlanId: string; keyId: string }) => {
    await guard(world, 'DeleteUsagePlanKey');
    if (!planOf(world, input.usagePlanId).keys.delete(input.keyId))
      throw new NotFoundException({ message: 'Invalid API Key identifier', ...metadata });
    return {};
  });
};
