/** Route schemas of the tracked-folders extension: validation, reply types and the OpenAPI document. */
import { Type } from 'typebox';

export const TAG = 'Tracked folders';

export const FolderInfo = Type.Object(
  {
    path: Type.String({ description: 'As written in settings `trackedFolders`' }),
    exists: Type.Boolean({ description: 'An existing directory right now' }),
    agentCount: Type.Integer({ minimum: 0, description: 'Agent files found in it (read without loading them)' }),
    truncated: Type.Boolean({ description: 'The walk stopped at a bound (200,000 entries or 5,000 agent files)' }),
  },
  { additionalProperties: false },
);

export const FolderList = Type.Object(
  {
    folders: Type.Array(FolderInfo),
    maxScanDepth: Type.Integer({
      minimum: 0,
      description: 'Folder levels below each tracked folder that walks and watchers descend into',
    }),
  },
  { additionalProperties: false },
);

export const AddFolderBody = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: 'Absolute path of an existing directory' }) },
  { additionalProperties: false },
);

export const FolderQuery = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: 'The tracked folder, as listed' }) },
  { additionalProperties: false },
);

export const RemoveResult = Type.Object(
  { success: Type.Boolean({ description: 'false when the folder was not tracked' }) },
  { additionalProperties: false },
);

export const TrackedAgent = Type.Object(
  {
    filePath: Type.String({ description: 'Real path of the agent file' }),
    id: Type.String(),
    name: Type.String(),
    handle: Type.Union([Type.String(), Type.Null()]),
    loaded: Type.Boolean(),
    reviewed: Type.Boolean({ description: 'Reviewed on this machine as the file is now' }),
    autostart: Type.Boolean(),
    passwordProtected: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const TrackedAgentList = Type.Object({ agents: Type.Array(TrackedAgent) }, { additionalProperties: false });
