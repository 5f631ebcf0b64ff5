// The Application queries of the pages (TanStack Query keys and fetches through the typed client).
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Application, ApplicationList } from '../api/views';

const PAGE = 500;

/** Every Application the caller may get, page by page (counts and filters need the whole list). */
export async function fetchAllApplications(): Promise<Application[]> {
  const items: Application[] = [];
  let pageToken = '';
  do {
    const page = unwrap(
      await api.GET('/api/v1/applications', { params: { query: { limit: PAGE, pageToken } } }),
    ) as ApplicationList;
    items.push(...(page.items ?? []));
    pageToken = page.nextPageToken ?? '';
  } while (pageToken);
  return items;
}

export const useApplications = () => useQuery({ queryKey: ['applications'], queryFn: fetchAllApplications });

export const applicationKey = (namespace: string, name: string) => ['application', namespace, name] as const;

export function useApplication(namespace: string, name: string) {
  return useQuery({
    queryKey: applicationKey(namespace, name),
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/applications/{name}', {
          params: { path: { name }, query: { appNamespace: namespace } },
        }),
      ) as Application,
  });
}
