import type { Route } from '../../shared/routes.ts';

/** The operation's route: what the handler carries (httpMiddleware) and its contract publishes. */
export const route = {
  operation: 'listOrders',
  method: 'GET',
  path: '/store/orders',
  streaming: true,
  summary: 'List every order',
  stability: 'stable',
} as const satisfies Route;
