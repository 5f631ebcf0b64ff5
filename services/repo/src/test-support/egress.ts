// The test git servers listen on 127.0.0.1, which the default egress policy denies: tests allow
// exactly that address and keep every other default in force.
import { DEFAULT_DENIED_NETWORKS, egressPolicy } from '../checkouts/egress.js';

export const LOCAL_GIT_EGRESS = egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '127.0.0.1,::1' });
