/**
 * The Order as the client hands it over, and its int64 fields: the OpenAPI document's Order
 * (client/src/generated/openapi.ts, from docs/openapi.json) with int64 fields as `bigint`.
 */
import type { components } from './generated/openapi.ts';

/**
 * An order, as the OpenAPI document describes it (client/src/generated/openapi.ts, from
 * docs/openapi.json), with int64 fields as `bigint`. The document leaves every field optional;
 * this service always sends `id`, and the client refuses an order without one.
 */
export type Order = components['schemas']['Order'] & { id: bigint };

/** The int64 fields of an Order: parsed as `bigint`. */
type Int64Field = { [K in keyof Order]-?: NonNullable<Order[K]> extends bigint ? K : never }[keyof Order];
export const int64Fields = ['id', 'petId'] as const satisfies readonly Int64Field[];
// Fails to compile when the document gains an int64 field this list lacks (after `npm run openapi`).
const everyInt64Field: Exclude<Int64Field, (typeof int64Fields)[number]> extends never ? true : false = true;
export const int64Keys: ReadonlySet<string> = new Set(everyInt64Field ? int64Fields : []);

/** One page of the v2 list. */
export type OrderPage = {
  orders: Order[];
  /** Where the next page starts: pass it as `cursor` to resume after this page. Absent on the last page. */
  cursor: string | undefined;
};
