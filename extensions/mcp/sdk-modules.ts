/** What the `mcp` extension uses of the MCP client SDK at run time (loaded through sdk.ts only). */
export {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UrlElicitationRequiredError,
  auth,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/client';
export { ChildStdioTransport } from './stdio-transport.js';
