import type { Route } from '../../shared/routes.ts';

/** The operation's route: what the handler carries (httpMiddleware) and its contract publishes. */
export const route = {
  operation: 'cancelOrder',
  method: 'DELETE',
  path: '/store/orders/{orderId}',
  streaming: false,
  summary: 'Cancel a pending order',
  stability: 'stable',
} as const satisfies Route;
