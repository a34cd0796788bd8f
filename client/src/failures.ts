/**
 * What an answer other than the expected one stands for: the `StoreOrdersError` of its Error
 * record (the body read within the error body's bounds), a `RedirectError`, or an
 * `InvalidResponseError` for an answer without a readable record; and its `Retry-After`, read as
 * RFC 9110 says.
 */
import { type BodyRead, type Watchdog, readBody } from './bounds.ts';
import { InvalidResponseError, RedirectError, StoreOrdersError, errorClassFor } from './errors.ts';

/** An Error record is at most ~12 KB (code ≤ 64, message ≤ 1,024 characters); its body is read up to this. */
export const errorBodyBytes = 65_536;

/**
 * `Retry-After` in seconds (RFC 9110 §10.2.3): delay-seconds (digits only) or an HTTP-date
 * (§5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms); undefined for anything else
 * (`1.5`, `-5`, `soon`), and the backoff applies.
 */
export const retryAfterSeconds = (value: string | null, now = Date.now()): number | undefined => {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = httpDate(text, now);
  return date === undefined ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
};

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const month = months.join('|');
const httpDates = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (?<day>\\d{2}) (?<month>${month}) (?<year>\\d{4}) (?<time>\\d{2}:\\d{2}:\\d{2}) GMT$`),
  // rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT
  new RegExp(
    `^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?<day>\\d{2})-(?<month>${month})-(?<year>\\d{2}) (?<time>\\d{2}:\\d{2}:\\d{2}) GMT$`,
  ),
  // asctime-date: Sun Nov  6 08:49:37 1994
  new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?<month>${month}) (?<day>[ \\d]\\d) (?<time>\\d{2}:\\d{2}:\\d{2}) (?<year>\\d{4})$`),
];

/** An HTTP-date's time in milliseconds, or undefined when `text` is not one. */
const httpDate = (text: string, now: number): number | undefined => {
  const parts = httpDates.map((pattern) => pattern.exec(text)?.groups).find((groups) => groups !== undefined);
  if (parts === undefined) return undefined;
  const [hours, minutes, seconds] = parts.time!.split(':').map(Number) as [number, number, number];
  if (hours > 23 || minutes > 59 || seconds > 60) return undefined;
  let year = Number(parts.year);
  if (parts.year!.length === 2) {
    // RFC 9110: a two-digit year more than 50 years ahead is the most recent past year with those digits.
    year += 2000;
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100;
  }
  return Date.UTC(year, months.indexOf(parts.month!), Number(parts.day), hours, minutes, seconds);
};

export type Answer = { response: Response; url: string; attempts: number; requestId: string | undefined; watch: Watchdog };

/** The error an answer other than the expected one stands for. */
export const failureOf = async (answer: Answer): Promise<StoreOrdersError> => {
  const { response, requestId, attempts } = answer;
  if (isRedirect(response)) {
    await response.body?.cancel().catch(() => undefined);
    return redirectError(answer);
  }
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  const details = { status: response.status, requestId, attempts, retryAfterSeconds: retryAfter };
  const read = await errorBody(answer);
  if (read instanceof StoreOrdersError)
    return new InvalidResponseError({ ...details, code: 'client_invalid_response', message: read.message, cause: read });
  const { code, message } = errorRecord(read);
  if (code === undefined || message === undefined)
    return new InvalidResponseError({
      ...details,
      code: 'client_invalid_response',
      message: `HTTP ${response.status} without an Error record: ${read.slice(0, 200)}`,
    });
  const ErrorClass = errorClassFor(response.status, code);
  return new ErrorClass({ ...details, code, message });
};

/** The error body's text, read whole within one idle bound and up to `errorBodyBytes`; or why it could not be read. */
const errorBody = async ({ response, requestId, attempts, watch }: Answer): Promise<string | StoreOrdersError> => {
  const read: BodyRead = {
    watch,
    maxBytes: errorBodyBytes,
    eachChunk: false,
    details: { status: response.status, requestId, attempts },
    what: `The body of HTTP ${response.status}`,
  };
  try {
    return await readBody(response, read);
  } catch (error) {
    if (error instanceof StoreOrdersError) return error;
    if (!watch.stalled) throw error;
    const message = `The body of HTTP ${response.status} did not arrive within ${watch.idleTimeoutMs} ms (idleTimeoutMs)`;
    return new InvalidResponseError({ code: 'client_invalid_response', status: response.status, message, requestId, attempts });
  }
};

/** The code and message of an Error record's text, each undefined unless a string. */
const errorRecord = (text: string): { code?: string | undefined; message?: string | undefined } => {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return {};
  }
  const { code, message } = (record ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' && typeof message === 'string' ? { code, message } : {};
};

/**
 * A redirect: a 3xx (Node's fetch hands it over with `redirect: 'manual'`), a browser's opaque
 * redirect (status 0, headers hidden), or an answer a `fetch` of the caller's own reached by
 * following one (`redirected`).
 */
export const isRedirect = (response: Response) =>
  response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400) || response.redirected;

const redirectError = ({ response, url, attempts, requestId }: Answer): RedirectError => {
  const header = response.redirected ? response.url : response.headers.get('location');
  const location = header === null || header === '' ? undefined : URL.canParse(header, url) ? new URL(header, url).href : header;
  const where = location ?? (response.type === 'opaqueredirect' ? 'a place the browser does not show' : 'no Location');
  return new RedirectError({
    code: 'client_redirect',
    status: response.status,
    message: `The answer was a redirect (${response.status || 'opaque'}) to ${where}; the client follows none: check baseUrl`,
    requestId,
    attempts,
    location,
  });
};
