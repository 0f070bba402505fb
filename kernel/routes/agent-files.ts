/**
 * The Files route group: the agent's own stored files, what its `fs_*` tools see. Paths follow
 * the one rule of `contracts/agent-paths.ts` (relative, no `.`/`..` segments, no `\` or NUL: 400).
 * Content travels as UTF-8 text or base64. `protection: readonly` keeps the agent's own tools from
 * changing or deleting a file; the owner's routes are not bound by it.
 */
import { Type } from 'typebox';
import { AgentIdParams, errorResponses, MAX_AGENT_PATH } from '@agt/contracts';
import { storedFileNotFound } from '../agents/stores/errors.js';
import type { StoredFileInfo } from '../agents/stores/files-store.js';
import { MAX_FILE_BYTES } from '../runtime/tools/fs-tools.js';
import { storedFileTooLarge } from '../runtime/tools/errors.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Files'];
const Path = Type.String({ minLength: 1, maxLength: MAX_AGENT_PATH, description: 'relative, `/`-separated' });
const Protection = Type.Union([Type.Literal('none'), Type.Literal('readonly')], {
  description: "readonly: the agent's own fs tools cannot change or delete it",
});
const Encoding = Type.Union([Type.Literal('utf-8'), Type.Literal('base64')]);
const FileInfo = Type.Object({
  path: Type.String(),
  size: Type.Integer(),
  mime_type: Type.Union([Type.String(), Type.Null()]),
  protection: Protection,
  created_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'epoch ms; null for a file stored before it was recorded',
  }),
  updated_at: Type.Integer({ description: 'epoch ms' }),
});
const FileContent = Type.Object({
  path: Type.String(),
  mime_type: Type.Union([Type.String(), Type.Null()]),
  size: Type.Integer(),
  encoding: Encoding,
  content: Type.String(),
});
const PathQuery = Type.Object({ path: Path });

const infoOf = (file: StoredFileInfo) => ({
  path: file.path,
  size: file.size,
  mime_type: file.mime,
  protection: file.protection,
  created_at: file.created_at,
  updated_at: file.updated_at,
});

/** UTF-8 when the bytes are valid UTF-8 text, else base64 (the client asked for neither). */
function encode(
  content: Buffer,
  wanted: 'utf-8' | 'base64' | undefined,
): { encoding: 'utf-8' | 'base64'; content: string } {
  if (wanted !== 'base64') {
    const text = content.toString('utf8');
    if (wanted === 'utf-8' || Buffer.from(text, 'utf8').equals(content)) return { encoding: 'utf-8', content: text };
  }
  return { encoding: 'base64', content: content.toString('base64') };
}

export const agentFileRoutes: KernelRoutes<'registry'> = async (app, { services }) => {
  const registry = services.registry;
  const files = (id: string) => {
    const agent = registry.resolve(id);
    return { agent, store: agent.file.files };
  };

  app.get(
    '/files',
    {
      schema: {
        tags: TAGS,
        summary: "The agent's stored files (no content), sorted by path",
        params: AgentIdParams,
        querystring: Type.Object({
          prefix: Type.Optional(
            Type.String({ maxLength: MAX_AGENT_PATH, description: 'only files under this folder' }),
          ),
        }),
        response: {
          200: Type.Object({ agentId: Type.String(), files: Type.Array(FileInfo) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const { agent, store } = files(request.params.id);
      return { agentId: agent.id, files: store.list(request.query.prefix ?? '').map(infoOf) };
    },
  );

  app.get(
    '/files/content',
    {
      schema: {
        tags: TAGS,
        summary: 'One stored file with its content (UTF-8 text when it is text, else base64; `encoding` chooses)',
        params: AgentIdParams,
        querystring: Type.Object({ path: Path, encoding: Type.Optional(Encoding) }),
        response: { 200: FileContent, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const { store } = files(request.params.id);
      const file = store.read(request.query.path);
      if (!file) throw storedFileNotFound(request.query.path);
      return {
        path: file.path,
        mime_type: file.mime,
        size: file.size,
        ...encode(file.content, request.query.encoding),
      };
    },
  );

  app.put(
    '/files/content',
    {
      // base64 of the largest file, plus the JSON around it.
      bodyLimit: Math.ceil((MAX_FILE_BYTES * 4) / 3) + 64 * 1024,
      schema: {
        tags: TAGS,
        summary:
          'Create or replace a stored file (an existing file keeps its creation time, and its protection unless given)',
        description: `At most ${MAX_FILE_BYTES} bytes (413 \`payload_too_large\`). The write does not fire the agent's \`on_file_change\` trigger (the owner edits, the agent did not act).`,
        params: AgentIdParams,
        querystring: PathQuery,
        body: Type.Object(
          {
            content: Type.String(),
            encoding: Type.Optional(Encoding),
            mime_type: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
            protection: Type.Optional(Protection),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), file: FileInfo }),
          ...errorResponses(404, 409, 413),
        },
      },
    },
    async (request) => {
      const { agent, store } = files(request.params.id);
      const { content, encoding, mime_type: mime, protection } = request.body;
      const bytes = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
      if (bytes.byteLength > MAX_FILE_BYTES) throw storedFileTooLarge(MAX_FILE_BYTES);
      const info = store.write(request.query.path, bytes, mime ?? null, protection);
      return { agentId: agent.id, success: true as const, file: infoOf(info) };
    },
  );

  for (const path of ['/files/content', '/files']) {
    app.delete(
      path,
      {
        schema: {
          tags: TAGS,
          summary:
            path === '/files'
              ? 'Alias of DELETE /agents/{id}/files/content'
              : 'Delete a stored file; 404 when there is none',
          params: AgentIdParams,
          querystring: PathQuery,
          response: {
            200: Type.Object({ agentId: Type.String(), success: Type.Literal(true) }),
            ...errorResponses(404, 409),
          },
        },
      },
      async (request) => {
        const { agent, store } = files(request.params.id);
        if (!store.delete(request.query.path)) throw storedFileNotFound(request.query.path);
        return { agentId: agent.id, success: true as const };
      },
    );
  }

  app.post(
    '/files/rename',
    {
      schema: {
        tags: TAGS,
        summary:
          'Move a stored file to a new path (content, times and protection kept); 404 when absent, 409 onto an existing file',
        params: AgentIdParams,
        body: Type.Object({ from: Path, to: Path }, { additionalProperties: false }),
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), file: FileInfo }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const { agent, store } = files(request.params.id);
      return {
        agentId: agent.id,
        success: true as const,
        file: infoOf(store.rename(request.body.from, request.body.to)),
      };
    },
  );
};
