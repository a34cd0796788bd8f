/**
 * The registry: the contract of every function of the service (`functions/<function>/contract.ts`),
 * in the order the API, the alarms and the dashboard list them. The CDK stack, the pre-traffic
 * hook's targets, the local service (npm start), the per-key limits, the monitoring, the OpenAPI
 * document and the probes' known-answer suite (each contract's `knownAnswers`) are built from it, so
 * adding an operation is its folder and one line here, and retiring one is the reverse
 * (test/infra/registry.test.ts and test/shipped/registry.test.ts add a throw-away one and take v2
 * away). Nothing that ships imports it (eslint.config.js): the hook's and the canary's bundles get
 * the suite through an entry generated from it (infra/cdk/release-checks.ts). No aws-cdk-lib here:
 * the local run imports this module.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { authorizerContract } from '../functions/authorizer/contract.ts';
import { cancelOrderContract } from '../functions/cancel-order/contract.ts';
import { listOrdersContract } from '../functions/list-orders/contract.ts';
import { listOrdersPagedContract } from '../functions/list-orders-paged/contract.ts';
import type { FunctionContract, OperationContract } from './function-contract.ts';
import type { Suite } from '../shared/known-answers.ts';
import { type Route, routeMatches } from '../shared/routes.ts';

/** The authorizer's contract and each operation's: what a stack, a local service or a document is built from. */
export type Registry = { readonly authorizer: FunctionContract; readonly operations: readonly OperationContract[] };

const operations = [listOrdersContract, cancelOrderContract, listOrdersPagedContract] as const;

export const registry: Registry = { authorizer: authorizerContract, operations };

/** The service's operations by name; the compiler lists what a `Record<Operation, …>` must hold. */
export type Operation = (typeof operations)[number]['name'];
/** Every function of the service with a deployment of its own: the authorizer and each operation. */
export type FunctionName = Operation | typeof authorizerContract.name;

/** Every function of a registry: the authorizer first, then each operation. */
export const functionsOf = (of: Registry = registry): readonly FunctionContract[] => [of.authorizer, ...of.operations];

/** The service's routes, in the registry's order. */
export const routes: readonly Route[] = registry.operations.map((contract) => contract.route);

/** An operation's route: what its handler passes to httpMiddleware. */
export const routeOf = (operation: Operation): Route => routes.find((route) => route.operation === operation)!;

/** A function's contract by name. */
export const contractOf = <Name extends FunctionName>(name: Name) =>
  functionsOf().find((contract) => contract.name === name)! as Name extends Operation ? OperationContract : FunctionContract;

/** The operation a method and full path (`/v1/…`) name, or undefined when no route matches. */
export const operationAt = (method: string, path: string, of: Registry = registry): string | undefined =>
  of.operations.find(({ route }) => routeMatches(route, method, path))?.name;

/** The known-answer modules of a registry's functions, in its order (the authorizer's first), absolute. */
export const knownAnswerFiles = (of: Registry = registry): string[] =>
  functionsOf(of).map(({ knownAnswers }) => resolve(import.meta.dirname, '..', knownAnswers));

/** The known-answer suite of a registry's functions, loaded from their modules (`npm run smoke`, the tests). */
export const loadSuites = async (of: Registry = registry): Promise<Suite[]> =>
  Promise.all(
    knownAnswerFiles(of).map(async (file) => {
      const suite = ((await import(pathToFileURL(file).href)) as { knownAnswers?: Suite }).knownAnswers;
      if (suite === undefined || !Array.isArray(suite.checks)) throw new Error(`${file} exports no knownAnswers suite`);
      return suite;
    }),
  );
