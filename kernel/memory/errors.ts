/** The coded errors of agent memory (docs/memory.md). Codes, messages and details are API. */
import { AgtError } from '@agt/contracts';

/** 404 `not_found`: no live memory with that id. */
export const memoryNotFound = (id: number) =>
  new AgtError('not_found', `no memory ${id}`, { details: { memory_id: id } });

/** 403 `key_material_refused`: the text holds a credential value (never stored; docs/memory.md). */
export const memoryHoldsCredential = (what: string) =>
  new AgtError(
    'key_material_refused',
    `the memory holds ${what}: memories never keep credential values (store it with PUT /agents/{id}/credentials/{name})`,
    {
      details: { reason: 'credential_value' },
    },
  );

/** 400 `bad_request`: an empty or too long memory text. */
export const memoryTextInvalid = (message: string) => new AgtError('bad_request', message);
