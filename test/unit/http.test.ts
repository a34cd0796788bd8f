import { describe, expect, it } from 'vitest';
import { authorizationHeaderPattern, bearerToken, hashApiKey, wholeApiArn } from '../../functions/authorizer/api-keys.ts';
import { acceptsGzip, header } from '../../shared/http.ts';
import { deprecationHeaders } from '../../shared/routes.ts';
import { routeOf } from '../../infra/registry.ts';

describe('Accept-Encoding negotiation', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.5', true],
    ['*', true],
    ['GZIP', true],
    ['gzip;q=0', false],
    ['deflate', false],
    ['', false],
    [undefined, false],
  ])('%s → gzip %s', (value, expected) => {
    expect(acceptsGzip(value)).toBe(expected);
  });
});

describe('header lookup', () => {
  it('finds a header whatever its case', () => {
    expect(header({ 'Accept-Encoding': 'gzip' }, 'accept-encoding')).toBe('gzip');
    expect(header(null, 'accept-encoding')).toBeUndefined();
  });
});

describe('bearer credentials', () => {
  it('takes the key from "Bearer <key>" with the scheme in any case', () => {
    expect(bearerToken('Bearer abc.def-123')).toBe('abc.def-123');
    expect(bearerToken('bearer abc')).toBe('abc');
  });

  it('takes the key after one or more spaces (RFC 7235: auth-scheme 1*SP token68)', () => {
    expect(bearerToken('Bearer  abc')).toBe('abc');
    expect(bearerToken('BEARER    abc==')).toBe('abc==');
  });

  it.each([
    'Basic abc',
    'Bearer',
    'Bearer ',
    'Bearer  ',
    'Bearer a b',
    'Bearer ab"c',
    'Token abc',
    'Bearer\tabc',
    'Bearerabc',
    ' Bearer abc',
  ])('refuses %j', (value) => {
    expect(bearerToken(value)).toBeUndefined();
    expect(authorizationHeaderPattern.test(value)).toBe(false);
  });

  it('stores only a SHA-256 hex digest of a key', () => {
    expect(hashApiKey('so_test_abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('so_test_abc')).not.toContain('abc');
  });
});

describe('authorizer policy', () => {
  it('allows the whole API and stage, so one cached policy serves both operations', () => {
    expect(wholeApiArn('arn:aws:execute-api:eu-west-1:123456789012:abc123/production/DELETE/v1/store/orders/42')).toBe(
      'arn:aws:execute-api:eu-west-1:123456789012:abc123/production/*/*',
    );
  });
});

describe('deprecation headers', () => {
  const route = routeOf('listOrders');
  it('are absent for a current route', () => {
    expect(deprecationHeaders(route)).toEqual({});
  });

  it('refuse a deprecation whose dates are invalid or whose sunset precedes it', () => {
    const deprecated = (since: string, sunset: string) => ({ ...route, deprecation: { since, sunset, successor: '/v2/store/orders' } });
    expect(() => deprecationHeaders(deprecated('soon', '2027-01-01T00:00:00Z'))).toThrow(
      /route listOrders: deprecation needs ISO 8601 dates/,
    );
    expect(() => deprecationHeaders(deprecated('2027-01-01T00:00:00Z', '2026-01-01T00:00:00Z'))).toThrow(/sunset not before since/);
  });
});
