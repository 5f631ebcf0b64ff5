import { mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

// The tests run the Go template module: build it first (cached; a no-op when current).
export default mergeConfig(shared, { test: { globalSetup: ['./vitest.setup.ts'] } });
