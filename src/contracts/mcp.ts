// The MCP endpoint (docs/mcp.md): `POST /mcp` takes JSON-RPC messages of MCP over Streamable HTTP and answers JSON-RPC
// (as JSON, or an event stream); GET and DELETE answer 405, as the stateless transport provides for. The messages'
// own shapes are MCP's (the tools list carries each tool's input schema), so the answers are open here.
import Type from 'typebox';
import { authenticatedBodyErrors, authenticatedErrors, ErrorEnvelope } from './common.ts';

export const McpResponses = {
  200: {
    description: 'The JSON-RPC answer to the message (or batch), as JSON or as an event stream.',
    content: {
      'application/json': { schema: Type.Unknown({ description: 'A JSON-RPC response, or an array of them.' }) },
      'text/event-stream': { schema: Type.String() },
    },
  },
  202: { description: 'Notifications or responses only: accepted, no body.', content: { 'application/json': { schema: Type.Null() } } },
  ...authenticatedBodyErrors(406),
};

/** GET (an event stream of a session) and DELETE (the end of one) of the Streamable HTTP transport: this endpoint is
 * stateless, so both answer 405 with `Allow: POST`, as the transport specification provides for. */
export const McpNoSessionResponses = {
  ...authenticatedErrors(),
  405: {
    description: 'Always: this MCP endpoint is stateless, with no session to stream (GET) or to end (DELETE). POST each message to /mcp instead.',
    headers: { allow: Type.Literal('POST', { description: 'The one method this endpoint takes.' }) },
    content: { 'application/json': { schema: ErrorEnvelope(405) } },
  },
};
