import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { routes as defaultRoutes, type Route } from '../../shared/routes.ts';
import { type Authorizer, type Gateway, installLambdaStreamingGlobals, type LambdaHandler, startGateway } from './gateway.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
let instances = 0;

export type LocalApiOptions = {
  readonly port: number;
  readonly dynamoDbEndpoint: string;
  readonly ordersTable: string;
  readonly apiKeysTable: string;
  readonly authorizerCacheTtlSeconds?: number;
  readonly routes?: readonly Route[];
  readonly documents?: Readonly<Record<string, () => string>>;
};

/**
 * The deployed service on this machine: the handler modules Lambda runs, configured through
 * the same environment variables the stack sets, behind the local gateway.
 */
export const startLocalApi = async (options: LocalApiOptions): Promise<Gateway> => {
  // What the CDK stack sets on each function; the handlers read it once, when first imported.
  Object.assign(process.env, {
    ORDERS_TABLE: options.ordersTable,
    API_KEYS_TABLE: options.apiKeysTable,
    DYNAMODB_ENDPOINT: options.dynamoDbEndpoint,
  });
  // A fresh module instance per local API (as each Lambda has its own), loaded up front like a
  // Lambda's init phase, so each instance keeps the configuration it was started with.
  const instance = ++instances;
  installLambdaStreamingGlobals(); // before the streaming handler module is evaluated
  const load = async <Handler>(file: string): Promise<Handler> =>
    (await import(`${pathToFileURL(resolve(repoRoot, file)).href}?instance=${instance}`)).handler;
  const routes = options.routes ?? defaultRoutes;
  const authorizer = await load<Authorizer>('functions/authorizer.ts');
  const handlers = new Map(await Promise.all(routes.map(async (route) => [route, await load<LambdaHandler>(route.handlerFile)] as const)));
  return startGateway({
    port: options.port,
    routes,
    handlers,
    authorizer,
    authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds ?? 300,
    ...(options.documents === undefined ? {} : { documents: options.documents }),
  });
};
