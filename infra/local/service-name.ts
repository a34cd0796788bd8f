/**
 * What the local runtime's process must hold before any shared module is evaluated (imported first
 * by start.ts). Powertools' Logger and Metrics read POWERTOOLS_SERVICE_NAME when they are
 * constructed, which is when shared/observability.ts is first imported (shared/dynamo.ts imports it
 * through the call timing), long before local-api.ts gives the handlers the stage's environment.
 * Where AWS_LAMBDA_MAX_CONCURRENCY is set (inherited from whatever started this process), they
 * also want Lambda's InvokeStore then: it is installed here (./lambda-runtime.ts).
 */
import { serviceName } from '../names.ts';
import { localStage } from '../stage-config.ts';
import { installInvokeStore } from './lambda-runtime.ts';

process.env.POWERTOOLS_SERVICE_NAME = serviceName(localStage.stage);
installInvokeStore();
