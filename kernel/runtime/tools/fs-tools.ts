/** `fs_*`: files stored inside the agent file (never the host file system). */
import { Type } from 'typebox';
import type { ToolDefinition } from '@agt/contracts';
import { builtin, json, type RuntimeLookup } from './define.js';
import { noStoredFile, storedFileTooLarge } from './errors.js';
import { storedFileReadonly } from '../../agents/stores/errors.js';
import { assertFileWriteFits, quotaBytesFor } from '../../storage/quota.js';

export const MAX_FILE_BYTES = 5 * 1024 * 1024;
const MAX_READ_BYTES = 256 * 1024;
const Path = Type.String({ minLength: 1, maxLength: 512, description: 'relative, "/"-separated' });
const Encoding = Type.Optional(Type.Union([Type.Literal('utf8'), Type.Literal('base64')], { default: 'utf8' }));

export function fsTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'fs_read',
        description: 'Read a file stored in the agent (utf8 text or base64).',
        input: Type.Object({ path: Path, encoding: Encoding }),
        run(runtime, { path, encoding }) {
          const file = runtime.agent.file.files.read(path);
          if (!file) throw noStoredFile(path);
          const bytes = file.content.subarray(0, MAX_READ_BYTES);
          const text = encoding === 'base64' ? bytes.toString('base64') : bytes.toString('utf8');
          return file.size > MAX_READ_BYTES ? `${text}\n[truncated: ${file.size} bytes in all]` : text;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'fs_write',
        description: 'Create or replace a file stored in the agent.',
        input: Type.Object({
          path: Path,
          content: Type.String(),
          encoding: Encoding,
          mime: Type.Optional(Type.String()),
        }),
        run(runtime, { path, content, encoding, mime }, context) {
          const bytes = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
          if (bytes.byteLength > MAX_FILE_BYTES) throw storedFileTooLarge(MAX_FILE_BYTES);
          const existing = runtime.agent.file.files.info(path);
          if (existing?.protection === 'readonly') throw storedFileReadonly(path);
          // The owner's storage quota (kernel/storage/quota.ts): checked before the write, never after.
          assertFileWriteFits(
            runtime.agent.file,
            quotaBytesFor(runtime.agent.ownerSettings?.(), runtime.agent.id),
            bytes.byteLength,
            existing?.size ?? 0,
          );
          const info = runtime.agent.file.files.write(path, bytes, mime ?? null);
          runtime.fire(
            'on_file_change',
            { path: info.path, action: 'write', size: info.size },
            { loop: context.loop, turnId: context.turnId },
          );
          return `wrote ${info.path} (${info.size} bytes)`;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'fs_list',
        description: 'List files stored in the agent, optionally under a folder.',
        input: Type.Object({ prefix: Type.Optional(Type.String({ maxLength: 512 })) }),
        run: (runtime, { prefix }) => json(runtime.agent.file.files.list(prefix ?? '')),
      },
      lookup,
    ),
    builtin(
      {
        name: 'fs_delete',
        description: 'Delete a file stored in the agent.',
        input: Type.Object({ path: Path }),
        run(runtime, { path }, context) {
          if (runtime.agent.file.files.info(path)?.protection === 'readonly') throw storedFileReadonly(path);
          if (!runtime.agent.file.files.delete(path)) throw noStoredFile(path);
          runtime.fire('on_file_change', { path, action: 'delete' }, { loop: context.loop, turnId: context.turnId });
          return `deleted ${path}`;
        },
      },
      lookup,
    ),
  ];
}
