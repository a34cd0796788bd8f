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
import { mockClient } from 'aws-sdk-client-mock';

type Plan = { id: string; name: string; stage: string; keys: Set<string> };
type Key = { id: string; name: string; value: string };
type CommandName = 'CreateApiKey' | 'CreateUsagePlanKey' | 'DeleteUsagePlanKey' | 'DeleteApiKey';

const metadata = { $metadata: {} };

export const fakeApiGateway = (plans: { name: string; stage: string }[]) => {
  const mock = mockClient(APIGatewayClient);
  const state = {
    plans: plans.map((plan, i): Plan => ({ id: `plan${i}`, ...plan, keys: new Set() })),
    keys: new Map<string, Key>(),
  };
  const failures = new Map<CommandName, Error>();
  /** Hooks run before a command changes anything (e.g. to look at the table at that moment). */
  const before = new Map<CommandName, () => Promise<void>>();
  let nextId = 0;
  let lastKeyName: string | undefined;
  let plansDeployed = true;
  const guard = async (name: CommandName) => {
    await before.get(name)?.();
    const failure = failures.get(name);
    if (failure === undefined) return;
    failures.delete(name);
    throw failure;
  };
  const planOf = (id: string | undefined) => {
    const plan = state.plans.find((candidate) => candidate.id === id);
    if (plan === undefined) throw new NotFoundException({ message: `Invalid Usage Plan ID specified`, ...metadata });
    return plan;
  };

  mock.on(GetUsagePlansCommand).callsFake((input: { keyId?: string }) => ({
    items: state.plans
      .filter((plan) => plansDeployed && (input.keyId === undefined || plan.keys.has(input.keyId)))
      .map(({ id, name, stage }) => ({ id, name, apiStages: [{ apiId: 'api1', stage }] })),
  }));
  mock.on(GetApiKeysCommand).callsFake((input: { nameQuery?: string; includeValues?: boolean }) => ({
    items: [...state.keys.values()]
      .filter((key) => key.name.startsWith(input.nameQuery ?? ''))
      .map((key) => ({ id: key.id, name: key.name, enabled: true, ...(input.includeValues === true ? { value: key.value } : {}) })),
  }));
  mock.on(CreateApiKeyCommand).callsFake(async (input: { name: string; value: string }) => {
    await guard('CreateApiKey');
    if ([...state.keys.values()].some((key) => key.value === input.value))
      throw new ConflictException({ message: 'API Key already exists', ...metadata });
    const key = { id: `apikey${++nextId}`, name: input.name, value: input.value };
    state.keys.set(key.id, key);
    lastKeyName = key.name;
    return { id: key.id, name: key.name, value: key.value, enabled: true };
  });
  mock.on(CreateUsagePlanKeyCommand).callsFake(async (input: { usagePlanId: string; keyId: string }) => {
    await guard('CreateUsagePlanKey');
    const plan = planOf(input.usagePlanId);
    if (!state.keys.has(input.keyId)) throw new NotFoundException({ message: 'Invalid API Key identifier specified', ...metadata });
    // One plan per API key and stage (AWS, "Usage plans and API keys for REST APIs").
    if (state.plans.some((other) => other.stage === plan.stage && other.keys.has(input.keyId)))
      throw new ConflictException({ message: 'Usage Plan already contains API key for this stage', ...metadata });
    plan.keys.add(input.keyId);
    return { id: input.keyId, type: 'API_KEY' };
  });
  mock.on(DeleteUsagePlanKeyCommand).callsFake(async (input: { usagePlanId: string; keyId: string }) => {
    await guard('DeleteUsagePlanKey');
    if (!planOf(input.usagePlanId).keys.delete(input.keyId))
      throw new NotFoundException({ message: 'Invalid API Key identifier', ...metadata });
    return {};
  });
  mock.on(DeleteApiKeyCommand).callsFake(async (input: { apiKey: string }) => {
    await guard('DeleteApiKey');
    if (!state.keys.delete(input.apiKey)) throw new NotFoundException({ message: 'Invalid API Key identifier', ...metadata });
    for (const plan of state.plans) plan.keys.delete(input.apiKey);
    return {};
  });

  return {
    mock,
    /** The API key of this name, with the names of the plans it is in. */
    key: (name: string) => {
      const key = [...state.keys.values()].find((candidate) => candidate.name === name);
      return key === undefined
        ? undefined
        : { ...key, plans: state.plans.filter((plan) => plan.keys.has(key.id)).map((plan) => plan.name) };
    },
    keyCount: () => state.keys.size,
    /** The name of the API key created last. */
    lastKeyName: () => lastKeyName,
    /** Whether the stack's usage plans exist (false: the stage is not deployed yet). */
    deployPlans: (deployed: boolean) => void (plansDeployed = deployed),
    failOnce: (command: CommandName, message = 'Rate exceeded') => failures.set(command, new Error(message)),
    before: (command: CommandName, hook: () => Promise<void>) => before.set(command, hook),
    restore: () => mock.restore(),
  };
};
