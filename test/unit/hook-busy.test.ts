/**
 * How the pre-traffic hook tells busy from wrong: only a documented refusal is busy (as the smoke
 * check judges it), a new version busy beside a live version that answers fails, busy only when
 * both are. The known answers themselves: test/unit/known-answers.test.ts; the shipped hook against
 * broken builds: test/shipped/pre-traffic-hook.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type Answer, ServiceBusy } from '../../shared/answers.ts';
import { busyAnswer, pairsCompared, retriedWhileBusy } from '../../functions/pre-traffic-hook/invocations.ts';

const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: new Headers({ 'X-Request-Id': 'r-1', ...headers }),
  body: typeof body === 'string' ? body : JSON.stringify(body),
  firstByteMs: 0,
});
const record = (code: string, status: number, message = 'm') => ({ code, message, status });

describe('a busy answer, as the hook judges it', () => {
  it('is a 429 too_many_requests or a 503 service_unavailable Error record with Retry-After', () => {
    expect(busyAnswer(answer(429, record('too_many_requests', 429), { 'Retry-After': '1' }))).toBe(
      'answered 429 too_many_requests, Retry-After 1',
    );
    expect(busyAnswer(answer(503, record('service_unavailable', 503), { 'Retry-After': '60' }))).toBe(
      'answered 503 service_unavailable, Retry-After 60',
    );
    expect(busyAnswer(answer(200, []))).toBeUndefined();
    expect(busyAnswer(answer(404, record('order_not_found', 404)))).toBeUndefined();
  });

  it.each([
    ['a 503 without Retry-After', answer(503, record('service_unavailable', 503))],
    ['a 429 without Retry-After', answer(429, record('too_many_requests', 429))],
    ['a 503 whose body is no Error record', answer(503, 'Service Unavailable', { 'Retry-After': '1' })],
    ['a 503 of another code', answer(503, record('internal_error', 503), { 'Retry-After': '1' })],
    ['a 429 of the 503 code', answer(429, record('service_unavailable', 429), { 'Retry-After': '1' })],
  ])('fails %s: an error no document promises', (_what, given) => {
    expect(() => busyAnswer(given)).toThrow(/^undocumented error: answered (429|503) /);
  });
});

describe('a busy new version beside the live one', () => {
  const busy = answer(503, record('service_unavailable', 503), { 'Retry-After': '1' });
  const good = answer(404, record('order_not_found', 404));
  const live = (answers: Answer[]) => {
    let asked = 0;
    return async () => ({
      version: '6',
      attempt: async () => answers[Math.min(asked++, answers.length - 1)]!,
      expected: (value: Answer) => value.status === 404,
    });
  };

  it(`fails when the new version is busy in each of ${pairsCompared} pairs while the live one answers as expected in ${pairsCompared - 1}`, async () => {
    const run = { deadline: Date.now() + 120_000 };
    const answers = [good, busy, good, good, good];
    await expect(retriedWhileBusy(run, async () => busy, busyAnswer, live(answers))).rejects.toThrow(
      /^busy in each of 5 tries \(last: answered 503 service_unavailable, Retry-After 1\) while the live version 6, asked beside each, answered as expected in 4$/,
    );
  }, 60_000);

  it('is busy, never failed, when the live version is busy too (or answers as expected in fewer pairs)', async () => {
    const run = { deadline: Date.now() + 10_000 };
    const error = await retriedWhileBusy(run, async () => busy, busyAnswer, live([good, busy, busy, good, busy])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceBusy);
    expect((error as Error).message).toMatch(/; the live version 6 answered [0-2] of [1-5]$/);
  }, 60_000);

  it('is busy when there is no live version to compare with (a first deploy, or the same version)', async () => {
    const run = { deadline: Date.now() + 3_000 };
    const error = await retriedWhileBusy(
      run,
      async () => busy,
      busyAnswer,
      async () => undefined,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceBusy);
  }, 60_000);

  it('judges the new version by its first answer that is not busy', async () => {
    const answers = [busy, busy, good];
    let asked = 0;
    const run = { deadline: Date.now() + 60_000 };
    await expect(retriedWhileBusy(run, async () => answers[asked++]!, busyAnswer, live([good]))).resolves.toBe(good);
  }, 60_000);
});
