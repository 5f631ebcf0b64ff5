// What every use case receives about the call: who, over which transport, and the correlation id.
import type { Principal } from '../auth/principal.js';
import type { Via } from '../rbac/authorizer.js';

export interface RequestContext {
  principal: Principal;
  via: Via;
  correlationId?: string | undefined;
  /** The caller's network address (no port), when the transport knows it: login throttling. */
  peer?: string | undefined;
}
