import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../infra/openapi/document.ts';
import { routes } from '../../infra/registry.ts';
import { resourcePath } from '../../shared/routes.ts';
import { route as deprecatedRoute } from '../fixtures/deprecated-operation/route.ts';
import { withDeprecated } from '../fixtures/deprecated-operation/contract.ts';
import { request, startTestApi } from '../lib/local-api.ts';

// The service's registry plus the test-only deprecated operation, as a deprecated operation of the service would stand.
const document = buildOpenApiDocument(withDeprecated.operations);
const legacy = document.paths?.[resourcePath(deprecatedRoute)]?.get;

describe('a deprecated route', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  beforeAll(async () => {
    api = await startTestApi([], { registry: withDeprecated });
  });
  afterAll(() => api?.close());

  it('is in the registry the service is built from', () => {
    expect(withDeprecated.operations.map(({ route }) => route.operation)).toEqual([
      'listOrders',
      'cancelOrder',
      'listOrdersPaged',
      'listOrdersLegacy',
    ]);
  });

  it('answers with Deprecation (RFC 9745), Sunset (RFC 8594) and a successor Link', async () => {
    const response = await request(api.url, 'GET', '/store/legacy-orders', api.auth, { contract: document });
    expect(response.status).toBe(200);
    // RFC 9745: a Structured Field Date, "@" and the Unix time in seconds (2025-01-01T00:00:00Z).
    expect(response.headers.get('deprecation')).toBe('@1735689600');
    // RFC 8594: an HTTP-date (IMF-fixdate).
    expect(response.headers.get('sunset')).toBe('Thu, 31 Dec 2026 00:00:00 GMT');
    expect(response.headers.get('link')).toBe('</v1/store/orders>; rel="successor-version"');
  });

  it('keeps current routes free of deprecation headers', async () => {
    const response = await request(api.url, 'GET', '/store/orders', api.auth, { contract: document });
    expect(response.status).toBe(200);
    expect(response.headers.get('deprecation')).toBeNull();
    expect(response.headers.get('sunset')).toBeNull();
  });

  it('still answers 401 from the gateway, without the headers the gateway cannot add', async () => {
    const response = await request(api.url, 'GET', '/store/legacy-orders', {}, { contract: document });
    expect(response.status).toBe(401);
    expect(response.headers.get('deprecation')).toBeNull();
  });

  it('is marked deprecated in the document, with its stability label and headers', () => {
    expect(legacy?.deprecated).toBe(true);
    expect(legacy?.['x-stability']).toBe('beta');
    expect(legacy?.description).toContain('Deprecated** since 2025-01-01T00:00:00Z');
    const ok = legacy?.responses?.['200'] as { headers: Record<string, { required: boolean }> };
    expect(ok.headers.Deprecation?.required).toBe(true);
    expect(ok.headers.Sunset?.required).toBe(true);
    expect(ok.headers.Link?.required).toBe(true);
    const unauthorized = legacy?.responses?.['401'] as { headers: Record<string, { required: boolean }> };
    expect(unauthorized.headers.Deprecation?.required).toBe(false);
    for (const path of routes.map(resourcePath)) {
      for (const operation of Object.values(document.paths?.[path] ?? {})) expect(operation).not.toHaveProperty('deprecated');
    }
  });
});
