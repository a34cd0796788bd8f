import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { FunctionContract } from '../function-contract.ts';
import type { StageConfig } from '../stage-config.ts';

/**
 * The secrets the functions' contracts name (`secrets`: the v2 list's cursor keys), each
 * `{"<generatedKey>": <random>}` made by Secrets Manager at the first deploy, in the stack's own
 * scope so that its construct id is its logical id. Nothing to keep: losing one only ends what it
 * signed (cursors in flight), so each goes with the stack. The stack grants each to its function alone.
 */
export const addFunctionSecrets = (
  scope: Construct,
  contracts: readonly FunctionContract[],
  config: Pick<StageConfig, 'stage'>,
): ReadonlyMap<string, secretsmanager.Secret> =>
  new Map(
    contracts
      .flatMap((contract) => contract.secrets ?? [])
      .map((declared) => {
        const secret = new secretsmanager.Secret(scope, declared.id, {
          secretName: declared.name(config.stage),
          description: declared.description(config.stage),
          generateSecretString: {
            secretStringTemplate: '{}',
            generateStringKey: declared.generatedKey,
            passwordLength: 64,
            excludePunctuation: true,
          },
          removalPolicy: RemovalPolicy.DESTROY,
        });
        Validations.of(secret).acknowledge({ id: 'AwsSolutions::AwsSolutions-SMG4', reason: declared.manualRotation });
        return [declared.id, secret] as const;
      }),
  );
