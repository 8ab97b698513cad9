// Binds each tool row to the route it calls: its input schema (the route's own schema objects), its roles and its
// scope come from the route's registered contract, so a tool cannot drift from its route. Checked at start-up.
import type { Principal } from '../../credentials/principal.ts';
import type { Role } from '../../credentials/roles.ts';
import { scopeGranted } from '../../credentials/mcp-scopes.ts';
import { registeredRails } from '../../rails/index.ts';
import type { RouteContract } from './route-contracts.ts';
import { headerArguments, toolDefinitions, type HeaderArgumentSpec, type ToolDefinition } from './tools.ts';

export interface ResolvedTool extends Omit<ToolDefinition, 'headers'> {
  /** The header fields the tool takes, by argument name: its own, then the rails' credentials if it takes them. */
  readonly headers: readonly string[];
  readonly headerArguments: Readonly<Record<string, HeaderArgumentSpec>>;
  /** The JSON schema an MCP host sees; for `body` and `query` tools, the route's schema object itself. */
  readonly inputSchema: Record<string, unknown>;
  /** The route's body schema (the same object the route validates with), when the tool sends a body. */
  readonly routeBodySchema: object | undefined;
  /** The body's fields a `bodyFieldsAsArguments` tool takes as arguments of their own (none otherwise). */
  readonly bodyFieldArguments: readonly string[];
  readonly pathParameters: readonly string[];
  readonly roles: readonly Role[];
  /** The scope a restricted key needs: the route's declared scope (`any` for every credential). */
  readonly scope: string;
}

const pathParameterPattern = /:([a-z_]+)/g;

/** Each registered rail's credential headers, by the argument name the rail declares for them. */
function railCredentialArguments(): Record<string, HeaderArgumentSpec> {
  return Object.fromEntries(registeredRails().flatMap((rail) =>
    rail.credentialHeaders.map((header) => [header.toolArgument, { header: header.name, description: header.toolDescription }])));
}

/** The header arguments a tool takes: the ones it names, and the rails' credentials when it takes them. */
function headerArgumentsOf(tool: ToolDefinition): Record<string, HeaderArgumentSpec> {
  const own: Record<string, HeaderArgumentSpec> = Object.fromEntries((tool.headers ?? []).map((name) => [name, headerArguments[name]]));
  return tool.railCredentials ? { ...own, ...railCredentialArguments() } : own;
}

/** Resolves every tool against the routes; a tool whose route is missing or unscoped is a programmer error. */
export function resolveTools(contracts: ReadonlyMap<string, RouteContract>): ResolvedTool[] {
  return toolDefinitions.map((tool) => {
    const toolHeaderArguments = headerArgumentsOf(tool);
    const headers = Object.keys(toolHeaderArguments);
    const contract = contracts.get(`${tool.method} ${tool.path}`);
    if (!contract) throw new Error(`MCP tool ${tool.name} calls ${tool.method} ${tool.path}, which is not a route`);
    const { access } = contract;
    if (!('roles' in access) || access.scope === undefined) {
      throw new Error(`MCP tool ${tool.name} calls ${tool.method} ${tool.path}, whose access names no scope for restricted keys`);
    }
    const routeBodySchema = (contract.schema?.body as object | undefined) ?? tool.bodySchema;
    const pathParameters = [...tool.path.matchAll(pathParameterPattern)].map((match) => match[1]!);
    const bodyFieldArguments = tool.bodyFieldsAsArguments ? Object.keys(bodyPropertiesOf(tool, routeBodySchema)) : [];
    for (const name of bodyFieldArguments) {
      if (name === 'body' || pathParameters.includes(name) || headers.includes(name)) {
        throw new Error(`MCP tool ${tool.name}: the body field ${name} would shadow another argument`);
      }
    }
    return {
      ...tool,
      headers,
      headerArguments: toolHeaderArguments,
      inputSchema: inputSchemaOf(tool, toolHeaderArguments, contract, routeBodySchema, pathParameters),
      routeBodySchema,
      bodyFieldArguments,
      pathParameters,
      roles: access.roles,
      scope: access.scope,
    };
  });
}

function inputSchemaOf(
  tool: ToolDefinition,
  toolHeaderArguments: Readonly<Record<string, HeaderArgumentSpec>>,
  contract: RouteContract,
  bodySchema: object | undefined,
  pathParameters: readonly string[],
): Record<string, unknown> {
  if (tool.input === 'body') {
    if (!bodySchema) throw new Error(`MCP tool ${tool.name} takes the body of ${tool.path}, which registers no body schema`);
    return bodySchema as Record<string, unknown>;
  }
  if (tool.input === 'query') {
    const query = contract.schema?.querystring as Record<string, unknown> | undefined;
    if (!query) throw new Error(`MCP tool ${tool.name} takes the query of ${tool.path}, which registers no query schema`);
    return query;
  }
  const parameterSchemas = (contract.schema?.params as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const properties: Record<string, unknown> = {};
  for (const name of pathParameters) properties[name] = parameterSchemas[name] ?? { type: 'string' };
  for (const [name, argument] of Object.entries(toolHeaderArguments)) {
    properties[name] = argument.takesObject
      ? { anyOf: [{ type: 'string', minLength: 1 }, { type: 'object' }], description: argument.description }
      : { type: 'string', minLength: 1, description: argument.description };
  }
  if (tool.method === 'POST' && bodySchema) properties['body'] = bodySchema;
  // The body's own property schemas, the same objects, for a tool that takes them as arguments too.
  if (tool.bodyFieldsAsArguments) Object.assign(properties, bodyPropertiesOf(tool, bodySchema));
  return { type: 'object', additionalProperties: false, required: [...pathParameters], properties };
}

/** The property schemas of an object body schema; a tool taking body fields as arguments needs one. */
function bodyPropertiesOf(tool: ToolDefinition, bodySchema: object | undefined): Record<string, unknown> {
  const properties = (bodySchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!properties) throw new Error(`MCP tool ${tool.name} takes body fields as arguments, but its route's body schema has no properties`);
  return properties;
}

/** Whether the principal may see and call the tool: its role is in the route's roles and, for a restricted key, the
 * key carries the route's scope. Exactly the route's own access rule (src/plugins/access.ts). */
export function toolAllowed(tool: ResolvedTool, principal: Principal): boolean {
  if (!tool.roles.includes(principal.role)) return false;
  const { credential } = principal;
  if (credential.type !== 'api_key' || credential.keyKind !== 'restricted' || tool.scope === 'any') return true;
  return scopeGranted(credential.scopes, tool.scope);
}
