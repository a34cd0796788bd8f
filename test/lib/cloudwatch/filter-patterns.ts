/**
 * CloudWatch Logs metric filters on JSON log events, for the alarm evaluator's scenarios: the
 * template's AWS::Logs::MetricFilter resources applied to an access log line as CloudWatch Logs
 * would ("Filter pattern syntax for metric filters": JSON property selectors `$.field`, comparison
 * with `=`, `!=`, `<`, `>`, `<=`, `>=`, joined by `&&` and `||`, in braces). The forms the stacks
 * use and no more: any other is refused, so a new filter is never read wrongly.
 */
import { resolve, type Template } from '../template.ts';
import type { Datum } from './metric-store.ts';

type Line = Record<string, unknown>;

const term = /^\s*\$\.([A-Za-z_][\w.]*)\s*(=|!=|<=|>=|<|>)\s*("(?:[^"\\*]|\\.)*"|-?\d+(?:\.\d+)?)\s*/;

/** Whether the JSON line matches the pattern `{ … }`. */
export const matchesPattern = (pattern: string, line: Line): boolean => {
  const body = /^\s*\{(.*)\}\s*$/s.exec(pattern)?.[1];
  if (body === undefined) throw new Error(`filter pattern ${pattern}: only JSON patterns in braces are modelled`);
  let rest = body;
  const expression = (): boolean => {
    let value = operand();
    for (;;) {
      const joint = /^\s*(&&|\|\|)/.exec(rest);
      if (joint === null) return value;
      rest = rest.slice(joint[0].length);
      const next = operand();
      value = joint[1] === '&&' ? value && next : value || next;
    }
  };
  const operand = (): boolean => {
    const open = /^\s*\(/.exec(rest);
    if (open !== null) {
      rest = rest.slice(open[0].length);
      const value = expression();
      const close = /^\s*\)/.exec(rest);
      if (close === null) throw new Error(`filter pattern ${pattern}: ) expected`);
      rest = rest.slice(close[0].length);
      return value;
    }
    const match = term.exec(rest);
    if (match === null) throw new Error(`filter pattern ${pattern}: "${rest}" is not modelled`);
    rest = rest.slice(match[0].length);
    const [, field, op, literal] = match;
    const actual = line[field!];
    if (literal!.startsWith('"')) {
      if (op !== '=' && op !== '!=') throw new Error(`filter pattern ${pattern}: ${op} on a string`);
      return (actual === JSON.parse(literal!)) === (op === '=');
    }
    if (typeof actual !== 'number') return false;
    const expected = Number(literal);
    return {
      '=': actual === expected,
      '!=': actual !== expected,
      '<': actual < expected,
      '>': actual > expected,
      '<=': actual <= expected,
      '>=': actual >= expected,
    }[op!]!;
  };
  const value = expression();
  if (rest.trim() !== '') throw new Error(`filter pattern ${pattern}: "${rest}" left over`);
  return value;
};

/** The datapoints the template's metric filters make of one log line of `logGroup` (`${LogicalId}` as the template names it). */
export const filteredDatapoints = (template: Template, logGroup: string, line: Line): Datum[] =>
  Object.values(template.Resources)
    .filter((resource) => resource.Type === 'AWS::Logs::MetricFilter' && String(resolve(resource.Properties.LogGroupName)) === logGroup)
    .flatMap(({ Properties: p }) =>
      matchesPattern(String(p.FilterPattern), line)
        ? (p.MetricTransformations as Record<string, unknown>[]).flatMap((t) => {
            const dimensions = Object.fromEntries(
              ((t.Dimensions ?? []) as { Key: string; Value: string }[]).map(({ Key, Value }) => [Key, line[Value.replace(/^\$\./, '')]]),
            );
            // A dimension whose field the line lacks makes no datapoint.
            if (Object.values(dimensions).some((value) => value === undefined || value === '')) return [];
            return [
              {
                namespace: String(t.MetricNamespace),
                name: String(t.MetricName),
                dimensions: Object.fromEntries(Object.entries(dimensions).map(([key, value]) => [key, String(value)])),
                value: Number(t.MetricValue),
              },
            ];
          })
        : [],
    );
