// Live status of one Application: the api's Server-Sent Events stream (fed by the sync service's
// events on the bus, RBAC checked like a get) replaces the cached Application with each change, so
// progress shows without polling. EventSource reconnects by itself after a network break.
import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { Application } from '../api/views';
import { applicationKey } from './queries';

export function streamUrl(namespace: string, name: string) {
  return `/api/v1/stream/applications?${new URLSearchParams({ name, appNamespace: namespace })}`;
}

export function useApplicationStream(namespace: string, name: string): 'connecting' | 'live' | 'closed' {
  const qc = useQueryClient();
  const [state, setState] = useState<'connecting' | 'live' | 'closed'>('connecting');
  useEffect(() => {
    const source = new EventSource(streamUrl(namespace, name));
    source.onopen = () => setState('live');
    source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
    source.onmessage = (m: MessageEvent<string>) => {
      const event = JSON.parse(m.data) as { result?: { application?: Application } };
      if (event.result?.application)
        qc.setQueryData(applicationKey(namespace, name), event.result.application);
    };
    return () => source.close();
  }, [qc, namespace, name]);
  return state;
}
