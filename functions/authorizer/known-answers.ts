/**
 * The authorizer's known answers (shared/known-answers.ts): the prober's own key is allowed, and a
 * wrong key is refused. The pre-traffic hook invokes the authorizer itself and reads its answer
 * (an Allow carrying the key's usage identifier; exactly `Unauthorized`, which API Gateway turns
 * into 401); over HTTP the gateway's answer is read (401 `unauthorized` with
 * `WWW-Authenticate: Bearer`). The registry collects this suite; the handler never imports it.
 */
import { type Answer, expectError, fail } from '../../shared/answers.ts';
import { type Authorization, type KnownAnswer, shown, type Suite } from '../../shared/known-answers.ts';

type Allowed = { principalId?: unknown; usageIdentifierKey?: unknown; policyDocument?: { Statement?: { Effect?: string }[] } };

/** The authorizer's own answer to the prober's key: an Allow with the key's usage identifier (for its tier's usage plan). */
const allowedByAuthorizer = ({ error, payload, usageIdentifierKey }: Extract<Authorization, { via: 'authorizer' }>) => {
  if (error !== undefined) fail(`refused it (${error}): ${shown(payload)}`);
  const answer = (payload ?? {}) as Allowed;
  if (answer.policyDocument?.Statement?.[0]?.Effect !== 'Allow') fail(`no Allow policy: ${shown(payload)}`);
  if (answer.usageIdentifierKey !== usageIdentifierKey) fail("the answer does not carry the key's usage identifier");
  return `Allow for ${String(answer.principalId)}, with its usage identifier`;
};

/**
 * The gateway let the key through: any answer but its refusals (401, 403). What the operation then
 * answered is its own checks' to judge, so a wrong operation never fails this check.
 */
const allowedByGateway = (answer: Answer) => {
  if (answer.status === 401 || answer.status === 403) fail(`refused it: ${answer.status} ${answer.body.slice(0, 200)}`);
  return `${answer.status} past the authorizer`;
};

const allows: KnownAnswer = {
  name: 'authorizer allows the key',
  requests: 1,
  run: async (probe) => {
    const authorization = await probe.authorize('own');
    return authorization.via === 'authorizer' ? allowedByAuthorizer(authorization) : allowedByGateway(authorization.answer);
  },
};

const refuses: KnownAnswer = {
  name: 'authorizer refuses a wrong key',
  requests: 0,
  run: async (probe) => {
    const authorization = await probe.authorize('wrong');
    if (authorization.via === 'authorizer') {
      const { error, payload } = authorization;
      // Exactly this message is what API Gateway turns into 401; anything else becomes a 500.
      if (error === undefined || (payload as { errorMessage?: unknown } | null)?.errorMessage !== 'Unauthorized')
        fail(`expected the error "Unauthorized", got ${error ?? 'an answer'}: ${shown(payload)}`);
      return 'Unauthorized';
    }
    const line = expectError(authorization.answer, 401, 'unauthorized');
    if (authorization.answer.headers.get('www-authenticate') !== 'Bearer') fail('401 without WWW-Authenticate: Bearer');
    return `${line}, WWW-Authenticate: Bearer`;
  },
};

export const knownAnswers: Suite = { checks: [allows, refuses] };
