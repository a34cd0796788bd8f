/**
 * Reading a synthesized template the way CloudWatch and Lambda will: which metrics its alarms
 * and dashboard read, which fields its saved queries and metric filters use, and how each
 * function is configured. Intrinsic functions are kept as `${Ref}` placeholders.
 */
export type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
export type Template = { Resources: Record<string, Resource> };

/** `{ Ref: X }` → `${X}`, `{ Fn::GetAtt: [X, Attr] }` → `${X.Attr}`, `{ Fn::Join: [sep, parts] }` → the joined text. */
export const resolve = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(resolve);
  if (typeof value !== 'object' || value === null) return value;
  const object = value as Record<string, unknown>;
  if (typeof object.Ref === 'string') return `\${${object.Ref}}`;
  const getAtt = object['Fn::GetAtt'] as [string, string] | undefined;
  if (getAtt !== undefined) return `\${${getAtt[0]}.${getAtt[1]}}`;
  const join = object['Fn::Join'] as [string, unknown[]] | undefined;
  if (join !== undefined) return join[1].map((part) => String(resolve(part))).join(join[0]);
  return Object.fromEntries(Object.entries(object).map(([key, inner]) => [key, resolve(inner)]));
};

export type MetricRef = { namespace: string; name: string; dimensions: Record<string, string>; readBy: string };

/** Every metric an alarm or a dashboard widget of the template reads. */
export const metricsRead = (template: Template): MetricRef[] => {
  const read: MetricRef[] = [];
  const dims = (list: unknown) =>
    Object.fromEntries(
      ((list ?? []) as { Name: unknown; Value: unknown }[]).map(({ Name, Value }) => [String(Name), String(resolve(Value))]),
    );
  for (const [id, resource] of Object.entries(template.Resources)) {
    const p = resource.Properties;
    if (resource.Type === 'AWS::CloudWatch::Alarm') {
      if (typeof p.MetricName === 'string')
        read.push({ namespace: String(p.Namespace), name: p.MetricName, dimensions: dims(p.Dimensions), readBy: `alarm ${id}` });
      for (const metric of (p.Metrics ?? []) as { MetricStat?: { Metric: Record<string, unknown> } }[]) {
        const m = metric.MetricStat?.Metric;
        if (m)
          read.push({ namespace: String(m.Namespace), name: String(m.MetricName), dimensions: dims(m.Dimensions), readBy: `alarm ${id}` });
      }
    }
    if (resource.Type === 'AWS::CloudWatch::Dashboard') {
      const body = JSON.parse(String(resolve(p.DashboardBody))) as { widgets: { properties: { metrics?: unknown[][] } }[] };
      for (const widget of body.widgets) {
        for (const entry of widget.properties.metrics ?? []) {
          const [namespace, name, ...rest] = entry.filter((part) => typeof part === 'string') as string[];
          if (namespace === undefined || name === undefined) continue; // a math expression
          const dimensions: Record<string, string> = {};
          for (let i = 0; i + 1 < rest.length; i += 2) dimensions[rest[i]!] = rest[i + 1]!;
          read.push({ namespace, name, dimensions, readBy: `dashboard ${id}` });
        }
      }
    }
  }
  return read;
};

export type MetricFilter = {
  id: string;
  logGroup: string;
  pattern: string;
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
};

export const metricFilters = (template: Template): MetricFilter[] =>
  Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Logs::MetricFilter')
    .flatMap(([id, { Properties: p }]) =>
      (p.MetricTransformations as Record<string, unknown>[]).map((t) => ({
        id,
        logGroup: String(resolve(p.LogGroupName)),
        pattern: String(p.FilterPattern),
        namespace: String(t.MetricNamespace),
        name: String(t.MetricName),
        dimensions: Object.fromEntries(((t.Dimensions ?? []) as { Key: string; Value: string }[]).map(({ Key, Value }) => [Key, Value])),
      })),
    );

export type LogQuery = { readBy: string; logGroups: string[]; query: string };

/** The saved Logs Insights queries and the dashboard's log widgets, with the log groups (as `${LogicalId}`) they read. */
export const logQueries = (template: Template): LogQuery[] => {
  const queries: LogQuery[] = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    const p = resource.Properties;
    if (resource.Type === 'AWS::Logs::QueryDefinition')
      queries.push({
        readBy: `query ${String(p.Name)}`,
        logGroups: (resolve(p.LogGroupNames) as string[]) ?? [],
        query: String(p.QueryString),
      });
    if (resource.Type === 'AWS::CloudWatch::Dashboard') {
      const body = JSON.parse(String(resolve(p.DashboardBody))) as { widgets: { type: string; properties: { query?: string } }[] };
      for (const widget of body.widgets.filter((w) => w.type === 'log')) {
        const text = widget.properties.query ?? '';
        const logGroups = [...text.matchAll(/SOURCE '([^']+)'/g)].map((match) => match[1]!);
        queries.push({ readBy: `dashboard ${id} log widget`, logGroups, query: text.replaceAll(/SOURCE '[^']+' \| /g, '') });
      }
    }
  }
  return queries;
};

const queryWords = new Set(
  'fields filter stats sort limit display by as asc desc and or not in like count sum avg min max pct bin ispresent isempty strlen'.split(
    ' ',
  ),
);

/**
 * The log fields a Logs Insights query reads (its own aliases, functions, literals and the
 * `@` fields CloudWatch adds itself left out). `error.message` stays dotted, as Insights
 * flattens nested JSON.
 */
export const queryFields = (query: string): string[] => {
  const withoutStrings = query.replaceAll(/'[^']*'|"[^"]*"/g, ' ');
  const aliases = new Set([...withoutStrings.matchAll(/\bas\s+([A-Za-z_][\w]*)/g)].map((match) => match[1]!));
  const fields = [...withoutStrings.matchAll(/(?<![\w.@])([A-Za-z_][\w.]*)(?![\w.])(?!\s*\()/g)].map((match) => match[1]!);
  return [...new Set(fields.filter((field) => !queryWords.has(field.toLowerCase()) && !aliases.has(field) && !/^\d/.test(field)))];
};

/** The `$.field` names of a metric filter pattern or dimension. */
export const jsonPathFields = (text: string): string[] => [...text.matchAll(/\$\.([A-Za-z_][\w.]*)/g)].map((match) => match[1]!);

/** The keys of a JSON object, nested keys dotted, as Logs Insights discovers them. */
export const flatKeys = (value: unknown, prefix = ''): string[] =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.entries(value).flatMap(([key, inner]) => [`${prefix}${key}`, ...flatKeys(inner, `${prefix}${key}.`)])
    : [];
