/**
 * CloudWatch metric math, as the User Guide's "Metric math syntax and functions" states it, for the
 * alarm evaluator (./alarms.ts): the operators and functions the stacks' alarms use (arithmetic,
 * comparison, AND/OR, FILL, IF), over time series aligned on the periods of an evaluation range.
 * An expression using anything else is refused, so a new function cannot go unevaluated.
 *
 * One point the documentation and this project's toolchain notes tell differently: whether an
 * arithmetic operation of two time series treats a missing value as 0 (the guide: "Missing values
 * in a time series are treated as 0") or has no datapoint there (docs/decisions.md). Both readings
 * are offered; the scenarios are evaluated under each, and must not differ.
 */

/** A time series on the evaluation's periods: undefined where it has no datapoint. */
export type Series = (number | undefined)[];
type Value = number | Series;

/** How an arithmetic operation of two time series treats a timestamp only one of them has. */
export type MissingReading = 'missing-is-zero' | 'missing-drops';

type Node =
  | { kind: 'number'; value: number }
  | { kind: 'id'; name: string }
  | { kind: 'call'; name: string; args: Node[] }
  | { kind: 'unary'; arg: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node };

const tokenPattern = /\s*(\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|&&|\|\||==|!=|<=|>=|[-+*/^(),<>])/y;

const tokenize = (text: string): string[] => {
  const tokens: string[] = [];
  tokenPattern.lastIndex = 0;
  while (tokenPattern.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(tokenPattern.lastIndex))) break;
    const match = tokenPattern.exec(text);
    if (match === null) throw new Error(`metric math: cannot read "${text.slice(tokenPattern.lastIndex)}" in ${text}`);
    tokens.push(match[1]!);
  }
  return tokens;
};

/** Precedence climbing over the tokens, lowest first: OR, AND, comparison, + -, * /, ^. */
const levels: string[][] = [['OR', '||'], ['AND', '&&'], ['==', '!=', '<=', '>=', '<', '>'], ['+', '-'], ['*', '/'], ['^']];

export const parseExpression = (text: string): Node => {
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected))
      throw new Error(`metric math: expected ${expected ?? 'more'} in ${text}`);
    return token;
  };
  const level = (index: number): Node => {
    if (index === levels.length) return unary();
    let left = level(index + 1);
    while (levels[index]!.includes(peek() ?? '')) left = { kind: 'binary', op: take(), left, right: level(index + 1) };
    return left;
  };
  const unary = (): Node => (peek() === '-' ? (take(), { kind: 'unary', arg: unary() }) : primary());
  const primary = (): Node => {
    const token = take();
    if (token === '(') {
      const inner = level(0);
      take(')');
      return inner;
    }
    if (/^\d/.test(token)) return { kind: 'number', value: Number(token) };
    if (!/^[A-Za-z_]/.test(token)) throw new Error(`metric math: unexpected "${token}" in ${text}`);
    if (peek() !== '(') return { kind: 'id', name: token };
    take('(');
    const args: Node[] = [];
    while (peek() !== ')') {
      args.push(level(0));
      if (peek() === ',') take(',');
    }
    take(')');
    return { kind: 'call', name: token, args };
  };
  const tree = level(0);
  if (at !== tokens.length) throw new Error(`metric math: "${tokens.slice(at).join(' ')}" left over in ${text}`);
  return tree;
};

/** The ids an expression reads (metrics or other expressions of the same query). */
export const idsOf = (node: Node): string[] => {
  if (node.kind === 'id') return [node.name];
  if (node.kind === 'call') return node.args.flatMap(idsOf);
  if (node.kind === 'unary') return idsOf(node.arg);
  if (node.kind === 'binary') return [...idsOf(node.left), ...idsOf(node.right)];
  return [];
};

type Context = { readonly length: number; readonly lookup: (id: string) => Series; readonly reading: MissingReading };

const arithmetic: Record<string, (a: number, b: number) => number | undefined> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  // "If the value of a data point causes a function to attempt to divide by zero, the data point is dropped."
  '/': (a, b) => (b === 0 ? undefined : a / b),
  '^': (a, b) => a ** b,
};
const comparison: Record<string, (a: number, b: number) => boolean> = {
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<=': (a, b) => a <= b,
  '>=': (a, b) => a >= b,
  '<': (a, b) => a < b,
  '>': (a, b) => a > b,
  AND: (a, b) => a !== 0 && b !== 0,
  '&&': (a, b) => a !== 0 && b !== 0,
  OR: (a, b) => a !== 0 || b !== 0,
  '||': (a, b) => a !== 0 || b !== 0,
};

const isScalar = (value: Value): value is number => typeof value === 'number';

/**
 * A binary operation, point by point. Against a scalar, a missing point stays missing. Of two
 * series: a comparison or logical operator treats the point only one has as 0 there (the guide's
 * table); arithmetic, as `reading` says.
 */
const binary = (op: string, left: Value, right: Value, context: Context): Value => {
  const isComparison = op in comparison;
  const apply = (a: number, b: number) => (isComparison ? (comparison[op]!(a, b) ? 1 : 0) : arithmetic[op]!(a, b));
  if (isScalar(left) && isScalar(right)) {
    const result = apply(left, right);
    if (result === undefined) throw new Error(`metric math: ${left} ${op} ${right} has no value`);
    return result;
  }
  return Array.from({ length: context.length }, (_, i) => {
    const a = isScalar(left) ? left : left[i];
    const b = isScalar(right) ? right : right[i];
    if (a === undefined && b === undefined) return undefined;
    if (isScalar(left) || isScalar(right) || (!isComparison && context.reading === 'missing-drops'))
      return a === undefined || b === undefined ? undefined : apply(a, b);
    return apply(a ?? 0, b ?? 0);
  });
};

/** IF(condition, trueValue, falseValue), as the guide's "Using IF expressions" states each case. */
const ifFunction = (args: Value[], context: Context): Series => {
  const [condition, whenTrue, whenFalse] = args;
  if (condition === undefined || whenTrue === undefined || args.length > 3) throw new Error('metric math: IF takes 2 or 3 arguments');
  return Array.from({ length: context.length }, (_, i) => {
    const holds = isScalar(condition) ? condition : condition[i];
    if (holds === undefined) return undefined;
    if (holds !== 0) return isScalar(whenTrue) ? whenTrue : (whenTrue[i] ?? 0);
    if (whenFalse === undefined) return undefined;
    return isScalar(whenFalse) ? whenFalse : whenFalse[i];
  });
};

const evaluateNode = (node: Node, context: Context): Value => {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'id':
      return context.lookup(node.name);
    case 'unary':
      return binary('*', -1, evaluateNode(node.arg, context), context);
    case 'binary':
      return binary(node.op, evaluateNode(node.left, context), evaluateNode(node.right, context), context);
    case 'call': {
      const args = node.args.map((arg) => evaluateNode(arg, context));
      if (node.name === 'IF') return ifFunction(args, context);
      if (node.name === 'FILL') {
        const [series, filler] = args;
        if (series === undefined || isScalar(series) || filler === undefined || !isScalar(filler) || args.length !== 2)
          throw new Error('metric math: FILL here takes a time series and a number');
        return series.map((value) => value ?? filler);
      }
      throw new Error(`metric math: ${node.name} is not modelled by this evaluator`);
    }
  }
};

/** Each expression's tree, parsed once: an alarm's expression is evaluated every minute of a scenario. */
const parsed = new Map<string, Node>();

/** The time series `expression` makes of the query's series (`lookup` by id), over `length` periods. */
export const evaluateExpression = (expression: string, context: Context): Series => {
  let tree = parsed.get(expression);
  if (tree === undefined) parsed.set(expression, (tree = parseExpression(expression)));
  const result = evaluateNode(tree, context);
  if (isScalar(result)) throw new Error(`metric math: ${expression} is a number, not a time series`);
  return result;
};
