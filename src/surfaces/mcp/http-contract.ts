// What `POST /mcp` accepts before the MCP SDK sees it: a JSON-RPC message (or a short batch) in the shapes the SDK
// parses, an Accept header that admits its answers, and a protocol version it speaks. Checked here so that a
// refusal is our error envelope with a catalogue code, like every route's, rather than the SDK's own answer.
import type { FastifyRequest } from 'fastify';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../../errors/service-error.ts';
import { mcpBatchMessagesMax, mcpMethodLengthMax } from '../../limits.ts';

const jsonRpcVersion = { const: '2.0' } as const;
const requestId = { anyOf: [{ type: 'string', maxLength: mcpMethodLengthMax }, { type: 'integer' }] } as const;
const method = { type: 'string', minLength: 1, maxLength: mcpMethodLengthMax } as const;

/** The SDK's message shapes (request, notification, result, error), each as strict as the SDK parses it. */
const jsonRpcMessage = {
  anyOf: [
    { type: 'object', additionalProperties: false, required: ['jsonrpc', 'id', 'method'], properties: { jsonrpc: jsonRpcVersion, id: requestId, method, params: { type: 'object' } } },
    { type: 'object', additionalProperties: false, required: ['jsonrpc', 'method'], properties: { jsonrpc: jsonRpcVersion, method, params: { type: 'object' } } },
    { type: 'object', additionalProperties: false, required: ['jsonrpc', 'id', 'result'], properties: { jsonrpc: jsonRpcVersion, id: requestId, result: { type: 'object' } } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['jsonrpc', 'error'],
      properties: {
        jsonrpc: jsonRpcVersion,
        id: requestId,
        error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } },
      },
    },
  ],
} as const;

export const mcpMessageBody = {
  anyOf: [jsonRpcMessage, { type: 'array', minItems: 1, maxItems: mcpBatchMessagesMax, items: jsonRpcMessage }],
} as const;

/** The transport answers JSON or an event stream, and a client must say it takes both (MCP Streamable HTTP). */
export async function assertMcpRequestHeaders(request: FastifyRequest): Promise<void> {
  const accept = request.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new ServiceError('request.not_acceptable');
  }
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
    throw new ServiceError('mcp.protocol_version_unsupported', { details: { supported_versions: SUPPORTED_PROTOCOL_VERSIONS } });
  }
}
