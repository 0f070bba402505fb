/**
 * The events of one MCP session's SSE streams, kept so a client whose stream dropped (a proxy's idle timeout, a
 * laptop's sleep) resumes it with `Last-Event-ID` and still gets a `chat` turn's progress and its result (MCP's
 * Streamable HTTP resumability). With it the SDK's transport starts each POST stream with a priming event (an id,
 * no data) and a `retry` field. Bounded by construction: the newest `MAX_EVENTS` events of the session, in memory
 * (a daemon restart ends sessions anyway). Event ids are `<stream id>:<sequence>`, so the stream is read off the id.
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Enough for a long turn's progress and its result; a client gone longer than that starts a new call. */
export const MAX_EVENTS = 500;

interface Stored {
  id: EventId;
  stream: StreamId;
  seq: number;
  message: JSONRPCMessage;
}

export class SessionEventStore implements EventStore {
  private readonly events: Stored[] = [];
  private seq = 0;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = ++this.seq;
    const id = `${streamId}:${seq}`;
    this.events.push({ id, stream: streamId, seq, message });
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const at = eventId.lastIndexOf(':');
    return at > 0 && /^\d+$/.test(eventId.slice(at + 1)) ? eventId.slice(0, at) : undefined;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const stream = (await this.getStreamIdForEventId(lastEventId)) ?? '';
    const after = Number(lastEventId.slice(lastEventId.lastIndexOf(':') + 1));
    for (const event of this.events) {
      // Priming events hold no message (`{}`): their id is all a client needs, so they are not sent again.
      if (event.stream !== stream || event.seq <= after || !('jsonrpc' in event.message)) continue;
      await send(event.id, event.message);
    }
    return stream;
  }
}
