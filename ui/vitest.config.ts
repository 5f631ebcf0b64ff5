// Component tests run in jsdom with Testing Library; the workspace's shared settings otherwise.
import { mergeConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import shared from '../vitest.shared.ts';

export default mergeConfig(shared, {
  plugins: [react()],
  test: {
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts'],
    environment: 'jsdom',
    setupFiles: ['src/test-support/setup.ts'],
    coverage: {
      include: ['src/**/*.{ts,tsx}'],
      exclude: ['src/**/*.test.*', 'src/gen/**', 'src/test-support/**'],
    },
  },
});
