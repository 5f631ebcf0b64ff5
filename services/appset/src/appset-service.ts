// Wires the appset service: its schema and the backbone. Generators, template rendering and the RBAC
// checks on generated Applications join here as they are built.
import type { CommonConfig, ServiceContext } from '@capstan/service';
import { startBackbone } from '@capstan/events';

export async function startAppset(ctx: ServiceContext<CommonConfig>): Promise<void> {
  await startBackbone(ctx, { schema: 'appset' });
}
