/**
 * `msg_send`, `msg_list`, `msg_read`: the agent's outbox and inbox. `msg_send` commits an outbox row
 * (status `queued`), announces it, and hands it to the outbound transport that claims its address (the
 * channels' and mesh extensions offer them, `contracts/points.ts`), which makes the row `delivered` or
 * `failed`; without one it stays `queued`. An agent whose `messaging.mode` is `listen_only` cannot send.
 */
import { Type } from 'typebox';
import type { ToolDefinition } from '@agt/contracts';
import { builtin, json, type RuntimeLookup } from './define.js';
import { listenOnly, noMessage } from './errors.js';

const Box = Type.Union([Type.Literal('inbox'), Type.Literal('outbox')]);
const MAX_LIST = 100;
const preview = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

export function msgTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'msg_send',
        description: 'Queue a message in your outbox for a channel (or "mesh") and recipient.',
        input: Type.Object({
          text: Type.String({ minLength: 1, maxLength: 100_000 }),
          channel: Type.String({ minLength: 1, maxLength: 100, description: 'channel name or "mesh"' }),
          recipient: Type.Optional(Type.String({ maxLength: 500 })),
          data: Type.Optional(
            Type.Unknown({
              description:
                'extra fields for the transport; {"parent_id": <inbox message id>} sends a reply to that message (the recipient may then be left out)',
            }),
          ),
        }),
        notable: true,
        run(runtime, { text, channel, recipient, data }, context) {
          if (runtime.agent.config.messaging?.mode === 'listen_only') throw listenOnly();
          const row = runtime.agent.file.outbox.insert({ channel, recipient: recipient ?? null, text, data });
          const origin = { loop: context.loop, turnId: context.turnId };
          runtime.emit('outbox.queued', { messageId: row.id, channel: row.channel }, origin);
          runtime.fire(
            'on_outbox',
            { messageId: row.id, channel: row.channel, recipient: row.recipient, text: row.text },
            origin,
          );
          runtime.sendOutbound(row);
          return `queued message ${row.id} to ${channel}`;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'msg_list',
        description: 'List inbox or outbox messages (newest last, text previews), optionally by status.',
        input: Type.Object({
          box: Box,
          status: Type.Optional(Type.String()),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIST })),
        }),
        run(runtime, { box, status, limit }) {
          const store = box === 'inbox' ? runtime.agent.file.inbox : runtime.agent.file.outbox;
          const rows = store.list({ status }).slice(-(limit ?? 20));
          return json(
            rows.map((row) => ({
              id: row.id,
              status: row.status,
              text: preview(row.text),
              created_at: row.created_at,
              ...('source' in row
                ? { source: row.source, sender: row.sender }
                : { channel: row.channel, recipient: row.recipient }),
            })),
          );
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'msg_read',
        description: 'Read one message in full; reading an unread inbox message marks it read.',
        input: Type.Object({ box: Type.Optional(Box), id: Type.Integer({ minimum: 1 }) }),
        run(runtime, { box, id }) {
          if ((box ?? 'inbox') === 'inbox') {
            const row = runtime.agent.file.inbox.get(id);
            if (!row) throw noMessage('inbox', id);
            if (row.status === 'unread') runtime.agent.file.inbox.setStatus(id, 'read');
            return json(row);
          }
          const row = runtime.agent.file.outbox.get(id);
          if (!row) throw noMessage('outbox', id);
          return json(row);
        },
      },
      lookup,
    ),
  ];
}
