import type { ServiceModule } from '@supply/kit';
import { tokensModule } from '@supply/tokens';
import { referenceModule } from '@supply/reference';
import { transactionalModule } from '@supply/transactional';
import { computeModule } from '@supply/compute';
import { workflowsModule } from '@supply/workflows';
import { gatewayModule } from '@supply/gateway';

/** Every module of the system; a target picks one, `all` runs them together. */
export const ALL_MODULES: ServiceModule[] = [
  tokensModule,
  referenceModule,
  transactionalModule,
  workflowsModule,
  computeModule,
  gatewayModule,
];
