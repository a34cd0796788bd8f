import { describe, expect, it } from 'vitest';
import { isApiError } from '../../shared/errors.ts';
import { instantOf, matches, parseListQuery } from '../../functions/list-orders-paged/list-query.ts';

const refusal = (parameters: Record<string, string>) => {
  try {
    parseListQuery(parameters);
  } catch (error) {
    if (isApiError(error)) return JSON.parse(error.message) as { code: string; message: string };
    throw error;
  }
  return undefined;
};

describe('the v2 list query parameters', () => {
  it('default to 100 orders a page, no filter, no split; unknown parameters are ignored', () => {
    const { binding, ...read } = parseListQuery(null);
    expect(read).toEqual({ pageSize: 100, linked: [], stringIds: false });
    expect(parseListQuery({ foo: 'bar' })).toEqual({ pageSize: 100, binding, linked: [], stringIds: false });
  });

  it('keep for the next link the parameters it repeats, as sent, and nothing else', () => {
    const sent = { cursor: 'abc', foo: 'bar', shipDateFrom: '2026-12-01T01:00:00+01:00', pageSize: '5', parts: '2', part: '1' };
    expect(parseListQuery(sent).linked).toEqual([
      ['pageSize', '5'],
      ['shipDateFrom', '2026-12-01T01:00:00+01:00'],
      ['part', '1'],
      ['parts', '2'],
    ]);
  });

  it.each([
    [{ pageSize: '0' }, 'pageSize'],
    [{ pageSize: '1001' }, 'pageSize'],
    [{ pageSize: '10.0' }, 'pageSize'],
    [{ pageSize: '1e2' }, 'pageSize'],
    [{ pageSize: '' }, 'pageSize'],
    [{ status: 'placed' }, 'status'],
    [{ status: 'PENDING' }, 'status'],
    [{ shipDateFrom: '2026-12-01' }, 'shipDateFrom'],
    [{ shipDateFrom: '2026-12-01T00:00:00' }, 'shipDateFrom'],
    [{ shipDateTo: '2026-02-30T00:00:00Z' }, 'shipDateTo'],
    [{ shipDateTo: '2026-12-01T24:00:00Z' }, 'shipDateTo'],
    [{ shipDateFrom: '2026-12-02T00:00:00Z', shipDateTo: '2026-12-01T00:00:00Z' }, 'shipDateTo'],
    [{ shipDateFrom: '2026-12-01T01:00:00+01:00', shipDateTo: '2026-12-01T00:00:00Z' }, 'shipDateTo'],
    [{ part: '1' }, 'parts'],
    [{ parts: '2' }, 'part'],
    [{ part: '0', parts: '2' }, 'part'],
    [{ part: '3', parts: '2' }, 'part'],
    [{ part: '1', parts: '17' }, 'parts'],
    [{ part: '1', parts: '0' }, 'parts'],
    [{ stringIds: '' }, 'stringIds'],
    [{ stringIds: 'TRUE' }, 'stringIds'],
    [{ stringIds: '1' }, 'stringIds'],
    [{ stringIds: 'yes' }, 'stringIds'],
  ])('refuse %j with invalid_query_parameter naming %s', (parameters, name) => {
    const record = refusal(parameters);
    expect(record?.code).toBe('invalid_query_parameter');
    expect(record?.message.startsWith(`${name} `)).toBe(true);
  });

  it('ask for the text ids with stringIds=true only, repeat it in the next link, and leave it out of the binding', () => {
    const asked = parseListQuery({ stringIds: 'true' });
    expect([parseListQuery({ stringIds: 'false' }).stringIds, asked.stringIds]).toEqual([false, true]);
    expect(asked.linked).toEqual([['stringIds', 'true']]);
    expect(asked.binding).toBe(parseListQuery(null).binding);
  });

  it('refuse an empty cursor as invalid_cursor', () => {
    expect(refusal({ cursor: '' })?.code).toBe('invalid_cursor');
  });

  it('read shipDate bounds as exact instants, whatever the offset or fraction', () => {
    expect(instantOf('2026-12-01T10:00:00Z')).toBe(instantOf('2026-12-01T11:00:00+01:00'));
    expect(instantOf('2026-12-01T10:00:00.000000001Z')! - instantOf('2026-12-01T10:00:00Z')!).toBe(1n);
    const query = parseListQuery({ shipDateFrom: '2026-12-01T00:00:00Z', shipDateTo: '2026-12-02T00:00:00+00:00' });
    expect(matches(query, { id: '1', shipDate: '2026-12-01T00:00:00Z' })).toBe(true);
    expect(matches(query, { id: '1', shipDate: '2026-11-30T23:59:59.999999999Z' })).toBe(false);
    expect(matches(query, { id: '1', shipDate: '2026-12-02T00:00:00Z' })).toBe(false);
    expect(matches(query, { id: '1', shipDate: '2026-12-02T00:59:59+01:00' })).toBe(true);
    expect(matches(query, { id: '1' })).toBe(false);
  });

  it('bind a cursor to the values of the filters and the part, not to pageSize or spelling', () => {
    const binding = (p: Record<string, string>) => parseListQuery(p).binding;
    expect(binding({ pageSize: '5', status: 'pending' })).toBe(binding({ status: 'pending' }));
    expect(binding({ shipDateFrom: '2026-12-01T00:00:00Z' })).toBe(binding({ shipDateFrom: '2026-12-01T01:00:00+01:00' }));
    expect(binding({ status: 'pending' })).not.toBe(binding({ status: 'shipped' }));
    expect(binding({ part: '1', parts: '2' })).not.toBe(binding({ part: '2', parts: '2' }));
    expect(binding({})).not.toBe(binding({ part: '1', parts: '1' }));
  });
});
