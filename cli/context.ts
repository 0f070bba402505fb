/** What every command starts from: the global options, the API client and the output. */
import { ApiClient } from './client.js';
import { resolveConnection } from './connection.js';
import { Output } from './output.js';

export interface GlobalOptions {
  url?: string;
  token?: string;
  settings?: string;
  json?: boolean;
  color?: boolean;
}

export interface Ctx {
  client: ApiClient;
  out: Output;
  options: GlobalOptions;
}

export function contextOf(options: GlobalOptions): Ctx {
  const connection = resolveConnection(options);
  return { client: new ApiClient(connection), out: new Output(options), options };
}
