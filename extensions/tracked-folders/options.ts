/** The `tracked-folders` extension's manifest `config`. */
import { Type, type Static } from 'typebox';

export const TrackedFoldersOptions = Type.Object(
  {
    watch: Type.Boolean({
      default: true,
      description: 'Watch the tracked folders for agent files added, changed, moved or removed',
    }),
    autostart: Type.Boolean({
      default: true,
      description: 'At boot, start the reviewed, non-password-protected `autostart` agents of the tracked folders',
    }),
  },
  { additionalProperties: false },
);

export type TrackedFoldersOptions = Static<typeof TrackedFoldersOptions>;
