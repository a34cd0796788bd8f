import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { routes as defaultRoutes, type Route } from '../../shared/routes.ts';
import { type Authorizer, type Gateway, type LambdaHandler, startGateway } from './gateway.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

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
  const load = async <Handler>(file: string): Promise<Handler> => (await import(pathToFileURL(resolve(repoRoot, file)).href)).handler;
  const authorizer = await load<Authorizer>('functions/authorizer.ts');
  return startGateway({
    port: options.port,
    routes: options.routes ?? defaultRoutes,
    loadHandler: (route) => load<LambdaHandler>(route.handlerFile),
    authorizer,
    authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds ?? 300,
    ...(options.documents === undefined ? {} : { documents: options.documents }),
  });
};
