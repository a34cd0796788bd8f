/**
 * `npm run smoke -- --base-url <url>`: a black-box check of a running stage (deployed or
 * `npm start`), the command to run right after `cdk deploy` and the one the pipeline runs after
 * each stage. The key comes from STORE_API_KEY. Read-only, unless `--cancel <orderId>` names an
 * order it may cancel. One line per check, a summary, exit code 1 on any mismatch (2 on a usage
 * error), and a timeout on every request. The checks themselves: shared/smoke-check.ts.
 */
import { smoke } from '../../shared/smoke-check.ts';

void smoke(process.argv.slice(2)).then((code) => (process.exitCode = code));
