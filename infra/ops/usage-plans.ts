/**
 * The API Gateway side of a key: its API key (whose value is the key's usage identifier) and
 * its membership in one usage plan of the stage. Everything is found by deterministic name, so
 * the key tool can be run again after a failure and pick up where it stopped:
 *
 * - the usage plan of a tier is `usagePlanName` (made by the stack),
 * - the API key of a key, which carries its usage identifier, is `apiKeyName` (made by the key tool),
 *
 * both from infra/names.ts.
 */
import {
  type APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  NotFoundException,
  paginateGetApiKeys,
  paginateGetUsagePlans,
} from '@aws-sdk/client-api-gateway';
import { apiKeyName, usagePlanName } from '../names.ts';

export type UsagePlanRef = { readonly id: string; readonly name: string; readonly tier: string };
export type GatewayApiKey = { readonly id: string; readonly name: string; readonly value: string };

export class UsagePlans {
  private readonly client: APIGatewayClient;
  private readonly stage: string;
  private readonly tiers: readonly string[];

  constructor(client: APIGatewayClient, stage: string, tiers: readonly string[]) {
    this.client = client;
    this.stage = stage;
    this.tiers = tiers;
  }

  /** The stage's usage plans by tier; plans of other stages or names are not ours. Pass `keyId` for those the API key is in. */
  async plans(options: { keyId?: string } = {}): Promise<Map<string, UsagePlanRef>> {
    const byTier = new Map<string, UsagePlanRef>();
    const names = new Map(this.tiers.map((tier) => [usagePlanName(this.stage, tier), tier]));
    for await (const page of paginateGetUsagePlans(
      { client: this.client },
      { ...(options.keyId === undefined ? {} : { keyId: options.keyId }) },
    )) {
      for (const plan of page.items ?? []) {
        const tier = names.get(plan.name ?? '');
        if (tier === undefined || plan.id === undefined) continue;
        if (byTier.has(tier)) throw new Error(`two usage plans are named ${plan.name}: remove the one the stack did not create`);
        byTier.set(tier, { id: plan.id, name: plan.name!, tier });
      }
    }
    return byTier;
  }

  /** The usage plan of one tier; a missing plan means the stack (with its tiers) is not deployed. */
  async plan(tier: string): Promise<UsagePlanRef> {
    const plan = (await this.plans()).get(tier);
    if (plan === undefined)
      throw new Error(
        `no usage plan ${usagePlanName(this.stage, tier)} in API Gateway: deploy the ${this.stage} stack first (it creates one plan per tier)`,
      );
    return plan;
  }

  /** The API key of a key id, with its value, or undefined. */
  async findKey(keyId: string): Promise<GatewayApiKey | undefined> {
    const name = apiKeyName(this.stage, keyId);
    const found: GatewayApiKey[] = [];
    // nameQuery matches by prefix: keep only the exact name.
    for await (const page of paginateGetApiKeys({ client: this.client }, { nameQuery: name, includeValues: true })) {
      for (const key of page.items ?? [])
        if (key.name === name && key.id !== undefined) found.push({ id: key.id, name, value: key.value ?? '' });
    }
    if (found.length > 1) throw new Error(`${found.length} API keys are named ${name}: delete all but one`);
    return found[0];
  }

  async createKey(keyId: string, usageKey: string, description: string): Promise<GatewayApiKey> {
    const name = apiKeyName(this.stage, keyId);
    const created = await this.client.send(new CreateApiKeyCommand({ name, value: usageKey, enabled: true, description }));
    return { id: created.id!, name, value: usageKey };
  }

  /** Puts the API key in the plan; already being in it is success. */
  async join(plan: UsagePlanRef, key: GatewayApiKey): Promise<void> {
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId: plan.id, keyId: key.id, keyType: 'API_KEY' }));
    } catch (error) {
      if (!(error instanceof ConflictException && (await this.plans({ keyId: key.id })).get(plan.tier)?.id === plan.id)) throw error;
    }
  }

  /** Takes the API key out of the plan; not being in it is success. */
  async leave(plan: UsagePlanRef, key: GatewayApiKey): Promise<void> {
    try {
      await this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: plan.id, keyId: key.id }));
    } catch (error) {
      if (!(error instanceof NotFoundException)) throw error;
    }
  }

  /** Deletes the API key; already gone is success. */
  async deleteKey(key: GatewayApiKey): Promise<void> {
    try {
      await this.client.send(new DeleteApiKeyCommand({ apiKey: key.id }));
    } catch (error) {
      if (!(error instanceof NotFoundException)) throw error;
    }
  }
}
