/**
 * The local stage's service name, set before any shared module is evaluated: Powertools' Logger
 * and Metrics read POWERTOOLS_SERVICE_NAME when they are constructed, which is when
 * shared/observability.ts is first imported (shared/dynamo.ts imports it through the call timing),
 * long before local-api.ts gives the handlers the stage's environment. Imported first by start.ts.
 */
import { serviceName } from '../names.ts';
import { localStage } from '../stage-config.ts';

process.env.POWERTOOLS_SERVICE_NAME = serviceName(localStage.stage);
