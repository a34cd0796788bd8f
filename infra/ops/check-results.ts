/** What every preflight check answers (./deploy-preflight.ts), and the AWS error shapes they tell apart. */
/** `warn`: an ok check that still asks for a fix (printed WARN): what it found blocks nothing the deploy makes. */
export type CheckResult = {
  readonly check: string;
  readonly ok: boolean;
  readonly message: string;
  readonly fix?: string;
  readonly warn?: boolean;
};

export const errorName = (error: unknown): string => (error as { name?: string }).name ?? '';

/** A read that failed: a failed check that says why, and which permission to add when AWS refused it. */
export const failedRead = (check: string, error: unknown): CheckResult => {
  const denied = /AccessDenied|UnauthorizedOperation|AuthorizationError/.test(errorName(error));
  return {
    check,
    ok: false,
    message: `${errorName(error)}: ${(error as Error).message}`,
    ...(denied
      ? {
          fix: 'give these credentials the preflight’s read-only permissions (docs/pipeline/deploy-role-permissions-policy.json; docs/reference/stages.md#what-the-account-needs-npm-run-preflight)',
        }
      : {}),
  };
};
