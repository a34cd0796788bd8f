import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FunctionContract, PerStage } from '../function-contract.ts';
import type { Registry } from '../registry.ts';
import type { StageName } from '../stage-config.ts';
import { resourcePath } from '../../shared/routes.ts';
import { repoRoot } from './store-function.ts';

/**
 * What a registry must hold before a stage is built from it: each function once, under the name
 * its route carries, each route once, each handler module present. A contract's per-stage values
 * (thresholds, objectives) are read through `ofStage` and its alarms' runbook sections through
 * monitoring/runbook.ts: a missing one stops the synth there, with a message that names it.
 */
export const registryProblems = (registry: Registry, stage: StageName): string[] => {
  const problems: string[] = [];
  const functions: readonly FunctionContract[] = [registry.authorizer, ...registry.operations];
  const names = functions.map(({ name }) => name);
  for (const name of new Set(names.filter((name, i) => names.indexOf(name) !== i))) problems.push(`two functions are named ${name}`);
  for (const { name, route } of registry.operations)
    if (route.operation !== name) problems.push(`operation ${name}: its route names ${route.operation}`);
  const routes = registry.operations.map(({ route }) => `${route.method} ${resourcePath(route)}`);
  for (const route of new Set(routes.filter((route, i) => routes.indexOf(route) !== i))) problems.push(`two operations serve ${route}`);
  for (const { name, function: settings, knownAnswers } of functions) {
    if (!existsSync(resolve(repoRoot, settings.handlerFile))) problems.push(`${name}: its handler ${settings.handlerFile} does not exist`);
    if (!existsSync(resolve(repoRoot, knownAnswers))) problems.push(`${name}: its known answers ${knownAnswers} do not exist`);
  }
  return problems.map((problem) => `${problem} (${stage})`);
};

/** A contract's value for `stage`, or an error naming what has none: `<what> has no value for stage production`. */
export const ofStage = <Value>(values: PerStage<Value>, stage: StageName, what: string): Value => {
  const value = (values as Partial<PerStage<Value>>)[stage];
  if (value === undefined)
    throw new Error(
      `${what} has no value for stage ${stage} (its contract's per-stage values name ${Object.keys(values).join(', ') || 'none'})`,
    );
  return value;
};
