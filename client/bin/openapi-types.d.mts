/** Types of client/bin/openapi-types.mjs, for the repository's own TypeScript that imports it. */
export declare const openApiTypes: (document: unknown, options?: { int64?: 'bigint' | 'number | bigint' }) => Promise<string>;
