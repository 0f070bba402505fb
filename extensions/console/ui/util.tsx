/** Small helpers shared by the views. */
import { useEffect, useState } from 'preact/hooks';
import { events, resyncs, type Listener } from './stream.js';

export const time = (ms: number) => new Date(ms).toLocaleTimeString();
export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Loads with `load`, reloads when a listened event matches `reloadOn` (debounced) or the stream resyncs. */
export function useLive<T>(
  load: () => Promise<T>,
  reloadOn: (type: string, agentId: string | null) => boolean,
  deps: unknown[] = [],
) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () =>
      load().then(
        (value) => alive && (setData(value), setError('')),
        (e) => alive && setError(errorText(e)),
      );
    run();
    const off = events.on((event) => {
      if (!reloadOn(event.event_type, event.agent_id)) return;
      clearTimeout(timer);
      timer = setTimeout(run, 10);
    });
    return () => {
      alive = false;
      clearTimeout(timer);
      off();
    };
  }, [resyncs.value, reloads, ...deps]);
  return { data, error, reload: () => setReloads((n) => n + 1) };
}

export function useEvents(listener: Listener, deps: unknown[] = []): void {
  useEffect(() => events.on(listener), deps);
}
