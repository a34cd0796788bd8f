/**
 * The v2 list's bounds are stated for people in docs/api.md (its parameter table and the cursor
 * lifetime), client/README.md and the runbook's cursor-key rotation; the code publishes them in
 * the OpenAPI document it generates (docs/openapi.json, checked against the code by
 * test/unit/openapi.test.ts). The client, which cannot import the service's code, restates the two
 * it applies before asking (client/src/paging.ts v2Bounds). Each statement here says what the document says.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { v2Bounds } from '../../client/src/paging.ts';
import { tableRows } from '../lib/markdown.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

type Schema = { minimum?: number; maximum?: number; default?: number; enum?: string[]; description?: string };
const document = JSON.parse(read('docs/openapi.json')) as {
  paths: Record<string, { get?: { parameters: { name: string; schema: Schema }[] } }>;
};
const parameter = (name: string): Schema => {
  const found = document.paths['/v2/store/orders']?.get?.parameters.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`the v2 list has no parameter ${name}`);
  return found.schema;
};
/** The cursor lifetime, as the cursor parameter's description states it. */
const cursorHours = Number(/expires (\d+) hours/.exec(parameter('cursor').description ?? '')?.[1]);

/** The numbers a pattern finds in a text: each a statement of one bound. */
const stated = (text: string, pattern: RegExp): number[] => [...text.matchAll(pattern)].map((match) => Number(match[1]));

describe("the v2 list's bounds in the docs", () => {
  const rows = tableRows(read('docs/api.md'), 'parameter');
  const cell = (name: string) => rows.find(([first]) => first === name)?.[1] ?? '';

  it("docs/api.md's parameter table gives pageSize's range and default as the document has them", () => {
    const pageSize = parameter('pageSize');
    expect(cell('`pageSize`')).toBe(`integer ${pageSize.minimum}–${pageSize.maximum}, default ${pageSize.default}`);
  });

  it("gives the status values and the split read's bound as the document has them", () => {
    expect([...cell('`status`').matchAll(/`(\w+)`/g)].map(([, value]) => value)).toEqual(parameter('status').enum);
    const parts = parameter('parts');
    expect(parameter('part')).toMatchObject({ minimum: 1, maximum: parts.maximum });
    expect(cell('`part`, `parts`')).toBe(`\`parts\` ${parts.minimum}–${parts.maximum}, \`part\` 1–\`parts\``);
    expect(stated(read('client/README.md'), /`parts` \(up to (\d+)\)/g)).toEqual([parts.maximum]);
  });

  it('states the cursor lifetime as the document does, wherever a page names it', () => {
    expect(cursorHours).toBeGreaterThan(0);
    const statements = [
      ...stated(read('docs/api.md'), /expire \*\*(\d+) hours\*\*/g),
      ...stated(read('docs/api.md'), /older than (\d+) hours/g),
      ...stated(read('docs/runbook.md'), /After (\d+) hours \(the cursor lifetime\)/g),
    ];
    expect(statements.length).toBeGreaterThanOrEqual(3);
    expect(statements.filter((hours) => hours !== cursorHours)).toEqual([]);
  });
});

describe("the v2 list's bounds in the client (client/src/paging.ts)", () => {
  const paging = read('client/src/paging.ts');
  const clientReadme = read('client/README.md');

  it("applies pageSize's default and parts' maximum as the document has them", () => {
    expect(v2Bounds).toEqual({ defaultPageSize: parameter('pageSize').default, maxParts: parameter('parts').maximum });
  });

  it('states them, and the page size range, as the document has them wherever its comments and README name them', () => {
    const pageSize = parameter('pageSize');
    expect(stated(paging, /Orders per page, 1\.\.(\d+) \(/g)).toEqual([pageSize.maximum]);
    expect(stated(paging, /the service's default: (\d+)\)/g)).toEqual([pageSize.default]);
    expect(stated(paging, /of `parts` \(1\.\.(\d+)\)/g)).toEqual([parameter('parts').maximum]);
    const capStatements = [...stated(paging, /a cap under (\d+)/g), ...stated(clientReadme, /a cap under (\d+)/g)];
    expect(capStatements).toHaveLength(2);
    expect(capStatements.filter((cap) => cap !== pageSize.default)).toEqual([]);
  });
});
