import type { Route } from '../../shared/routes.ts';

/** The operation's route: what the handler carries (httpMiddleware) and its contract publishes. */
export const route = {
  operation: 'listOrdersPaged',
  method: 'GET',
  path: '/store/orders',
  apiVersion: 'v2',
  streaming: false,
  summary: 'List orders in pages (filtered, resumable, splittable)',
  stability: 'experimental',
} as const satisfies Route;
