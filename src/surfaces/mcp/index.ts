// The MCP endpoint (docs/mcp.md): `POST /mcp` speaks MCP over Streamable HTTP, stateless, with a new SDK server and
// transport per request, each authenticated by its own Bearer credential like every route. GET and DELETE have no
// session to stream or end, so they answer 405, as the MCP transport specification provides for.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../credentials/principal.ts';
import { McpNoSessionResponses, McpResponses } from '../../contracts/mcp.ts';
import { errorCatalogue } from '../../errors/catalogue.ts';
import { packageVersion } from '../../infra/package-version.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { anyRole, principalOf } from '../../plugins/access.ts';
import { dispatchTool } from './dispatch.ts';
import { assertMcpRequestHeaders, mcpMessageBody } from './http-contract.ts';
import { resolveTools, toolAllowed, type ResolvedTool } from './resolved-tools.ts';

export const mcpPath = '/mcp';
/** The package's own name and version, as the OpenAPI document reports them. */
const serverInfo = { name: 'svc-settlement', version: packageVersion };
/** Every credential may open the endpoint; what it then sees is capped per tool by the tool's route. */
const access = { roles: anyRole, scope: 'any' } as const;

export async function mcp(app: FastifyInstance): Promise<void> {
  let tools: readonly ResolvedTool[] = [];
  // Every route is registered by then; a tool whose route is missing stops the start.
  app.addHook('onReady', async () => {
    tools = resolveTools(app.routeContracts);
  });

  const contract = {
    config: { access },
    preValidation: assertMcpRequestHeaders,
    schema: { summary: 'Send MCP messages (Streamable HTTP, stateless)', body: mcpMessageBody, response: McpResponses },
  };
  app.post(mcpPath, contract, async (request, reply) => {
    const principal = principalOf(request);
    // The route authenticated this header; the tools' routes authenticate it again, each for itself.
    const authorization = request.headers.authorization!;
    const server = mcpServer(app, tools, principal, authorization);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // From here the SDK writes the answer; the headers set so far (request id, rate limit) go with it.
    reply.hijack();
    copyHeaders(reply);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      // The error handler no longer sees a hijacked reply: the envelope is written here, generic as every 5xx.
      if (!reply.raw.headersSent) {
        const { status, message } = errorCatalogue['internal.error'];
        reply.raw.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify({ error: { code: 'internal.error', message }, request_id: request.id }));
      }
    }
  });

  const noSession = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    throw new ServiceError('request.method_not_allowed', { message: 'This MCP endpoint is stateless: POST each message; there is no session to stream (GET) or end (DELETE).' });
  };
  const noSessionContract = (summary: string) => ({
    config: { access },
    schema: { summary, description: 'This endpoint is stateless: the transport\'s sessions are not offered, and every message is its own POST, answered in full (docs/mcp.md).', response: McpNoSessionResponses },
  });
  app.get(mcpPath, noSessionContract('Open a session\'s event stream: not offered (405)'), noSession);
  app.delete(mcpPath, noSessionContract('End a session: not offered (405)'), noSession);
}

function copyHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value);
  }
}

/** One SDK server for one request and one principal: it lists the tools the principal may call and runs them. */
function mcpServer(app: FastifyInstance, tools: readonly ResolvedTool[], principal: Principal, authorization: string): Server {
  const server = new Server(serverInfo, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools
      .filter((tool) => toolAllowed(tool, principal))
      .map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as { type: 'object' },
        annotations: { readOnlyHint: tool.readOnly },
      })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const tool = tools.find((candidate) => candidate.name === call.params.name);
    // Fails closed: a tool this key may not call is answered as unknown, naming what it would need.
    if (!tool) throw new ToolRefusal(`Unknown tool ${call.params.name}: no scope or role grants it.`);
    if (!toolAllowed(tool, principal)) throw refusal(tool, principal);
    return dispatchTool(app, tool, call.params.arguments ?? {}, authorization);
  });
  return server;
}

/**
 * A tool call refused before it runs: JSON-RPC's invalid-params error (-32602), its message the reason alone. The
 * SDK's McpError would prefix "MCP error -32602: " to the message it sends, which a client's McpError prefixes again.
 */
class ToolRefusal extends Error {
  readonly code = ErrorCode.InvalidParams;
  constructor(
    message: string,
    readonly data?: { readonly code: string; readonly [fact: string]: unknown },
  ) {
    super(message);
    this.name = 'ToolRefusal';
  }
}

function refusal(tool: ResolvedTool, principal: Principal): ToolRefusal {
  if (!tool.roles.includes(principal.role)) {
    return new ToolRefusal(`Tool ${tool.name} needs one of the roles ${tool.roles.join(', ')}; this credential is ${principal.role}.`, {
      code: 'auth.role_insufficient',
      required_roles: tool.roles,
    });
  }
  return new ToolRefusal(`Tool ${tool.name} needs the scope ${tool.scope}, which this restricted key does not carry.`, {
    code: 'auth.scope_insufficient',
    required_scope: tool.scope,
  });
}
