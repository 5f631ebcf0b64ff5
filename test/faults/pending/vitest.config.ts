// Scenarios that reproduce open findings (README: Pending): run on purpose, never by npm test.
import shared from '../../../vitest.shared.ts';

export default { ...shared, test: { ...shared.test, include: ['pending/*.test.ts'] } };
