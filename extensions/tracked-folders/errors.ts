/** The tracked-folders extension's coded errors (the kernel maps each code to its status). */
import { AgtError } from '@agt/contracts';

/** 400 `bad_request`: a tracked folder must be an absolute path. */
export const folderNotAbsolute = (path: string) =>
  new AgtError('bad_request', `tracked folder ${JSON.stringify(path)} is not an absolute path`);

/** 400 `bad_request`: no directory at that path. */
export const folderNotDirectory = (path: string) =>
  new AgtError('bad_request', `tracked folder ${path} is not an existing directory`);

/** 409 `conflict`: the folder is already tracked, itself or through a tracked folder that contains it. */
export const folderAlreadyTracked = (path: string, coveredBy: string) =>
  new AgtError(
    'conflict',
    path === coveredBy ? `${path} is already tracked` : `${path} is inside the tracked folder ${coveredBy}`,
    { details: { coveredBy } },
  );
