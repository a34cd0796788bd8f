/**
 * No secret in any error: the API key, and the token after any `Bearer `, replaced by
 * `[redacted]` in every string a call's error carries (message, stack, code, request id,
 * location) and in its causes, before a hook or the caller sees it. A server or proxy that echoes
 * the `Authorization` header (in a text 500, in an Error record's message, in a header) then puts
 * nothing of the key into logs and error trackers. Excerpts are cut after scrubbing, and any run
 * of 8 or more characters of the key is taken for the key, so that a cut (an excerpt's end, a
 * parser's message quoting 40 characters) cannot leave most of it behind.
 */

const redacted = '[redacted]';
/** The shortest run of the key's characters taken for the key (the whole key when it is shorter). */
const fragmentLength = 8;
/** How deep a chain of causes is followed. */
const maxDepth = 8;

export type Scrub = (text: string) => string;

/** A function that scrubs `key` (raw or percent-encoded) and bearer tokens from a text. */
export const keyScrubber = (key: string): Scrub => {
  const forms = [...new Set([key, encodeURIComponent(key)])].filter((form) => form !== '');
  const size = Math.min(fragmentLength, ...forms.map((form) => form.length));
  const fragments = new Set(forms.flatMap((form) => Array.from({ length: form.length - size + 1 }, (_, i) => form.slice(i, i + size))));
  return (text) => {
    const bearerFree = text.replace(/Bearer\s+[^\s"'<>,;]+/gi, `Bearer ${redacted}`);
    return size === 0 ? bearerFree : dropFragments(bearerFree, fragments, size);
  };
};

/** `text` with each run of overlapping or touching `fragments` (each `size` characters long) replaced by one `[redacted]`. */
const dropFragments = (text: string, fragments: ReadonlySet<string>, size: number): string => {
  const parts: string[] = [];
  let copied = 0;
  for (let i = 0; i + size <= text.length;) {
    if (!fragments.has(text.slice(i, i + size))) {
      i++;
      continue;
    }
    let end = i + size;
    for (let j = i + 1; j <= end && j + size <= text.length; j++) if (fragments.has(text.slice(j, j + size))) end = j + size;
    parts.push(text.slice(copied, i), redacted);
    copied = end;
    i = end;
  }
  return parts.length === 0 ? text : `${parts.join('')}${text.slice(copied)}`;
};

/**
 * `error` with every string it and its causes carry scrubbed, in place (the same object, so that
 * `instanceof` and identity hold); a string cause is replaced by its scrubbed text.
 */
export const scrubError = <E>(error: E, scrub: Scrub): E => {
  scrubObject(error, scrub, 0, new Set());
  return error;
};

const scrubObject = (value: unknown, scrub: Scrub, depth: number, seen: Set<object>): void => {
  if (typeof value !== 'object' || value === null || seen.has(value) || depth > maxDepth) return;
  seen.add(value);
  const record = value as Record<string, unknown>;
  for (const name of ['message', 'stack', 'code', 'requestId', 'location']) {
    const text = record[name];
    if (typeof text === 'string' && scrub(text) !== text) redefine(value, name, scrub(text));
  }
  if (typeof record.cause === 'string') redefine(value, 'cause', scrub(record.cause));
  else scrubObject(record.cause, scrub, depth + 1, seen);
  if (Array.isArray(record.errors)) for (const inner of record.errors) scrubObject(inner, scrub, depth + 1, seen);
};

/** Sets a property even where it is a read-only own property or a getter (a DOMException's message). */
const redefine = (target: object, name: string, value: string) => {
  try {
    const enumerable = Object.getOwnPropertyDescriptor(target, name)?.enumerable ?? false;
    Object.defineProperty(target, name, { value, configurable: true, writable: true, enumerable });
  } catch {
    // A frozen object: nothing the client built, and nothing it can change.
  }
};
