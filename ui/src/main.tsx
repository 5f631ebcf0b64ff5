import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { App } from './app/App';
import { initialTheme } from './app/theme';
import { isDenied, isUnauthenticated } from './api/errors';
import './app/styles.css';

document.documentElement.dataset.theme = initialTheme();
const queryClient = new QueryClient({
  defaultOptions: {
    // A denial or a missing session does not change by asking again.
    queries: { retry: (n, e) => !isDenied(e) && !isUnauthenticated(e) && n < 2, refetchOnWindowFocus: false },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
