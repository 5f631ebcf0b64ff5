// Renders a page as the app does: a fresh query cache (no retries, so an error shows at once) and
// a router at `path` whose history the test can read.
import type { ReactNode } from 'react';
import { render } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';

export function renderPage(ui: ReactNode, path = '/') {
  const location = memoryLocation({ path, record: true });
  const client = new QueryClient({
    defaultOptions: { queries: { retry: false }, mutations: { retry: false } },
  });
  const result = render(
    <QueryClientProvider client={client}>
      <Router hook={location.hook} searchHook={location.searchHook}>
        {ui}
      </Router>
    </QueryClientProvider>,
  );
  return { ...result, location, client };
}
