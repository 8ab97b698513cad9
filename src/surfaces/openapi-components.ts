// The OpenAPI document's shared schemas (docs/api.md#components): @fastify/swagger writes every route's schemas inline,
// so each named contract (src/contracts/components.ts, marked by its `title`) is moved into `components.schemas` once
// and replaced, wherever it appears in a request body or an answer, by a `$ref` to it.

type Json = Record<string, unknown>;

/** Members whose values are data (or sets of values), not schemas: never walked for named schemas. */
const dataMembers = new Set(['examples', 'example', 'default', 'enum', 'const']);

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Two renderings of one named schema must be the same schema, or a `$ref` would change what one operation accepts
 * or answers. Only their `examples` may differ: @fastify/swagger moves the examples of an answer's top schema to the
 * answer's media type (where readers look for them), and leaves those of a nested one in place. */
function sameSchema(left: Json, right: Json): boolean {
  const { examples: _left, ...leftRest } = left;
  const { examples: _right, ...rightRest } = right;
  return JSON.stringify(leftRest) === JSON.stringify(rightRest);
}

/**
 * Moves every schema whose `title` is in `names` into `document.components.schemas[title]` and puts a `$ref` in its
 * place, in every request body and answer of every operation (named schemas inside named schemas too). Throws when a
 * name is rendered two different ways, which would be a contract bug the document must not hide.
 */
export function hoistNamedSchemas(document: Json, names: ReadonlySet<string>): Json {
  const components = ((document['components'] ??= {}) as Json);
  const schemas = ((components['schemas'] ??= {}) as Json);

  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (!isObject(node)) return node;
    for (const [key, member] of Object.entries(node)) if (!dataMembers.has(key)) node[key] = hoist(member);
    const title = node['title'];
    if (typeof title !== 'string' || !names.has(title)) return node;
    const named = schemas[title] as Json | undefined;
    if (named !== undefined && !sameSchema(named, node)) throw new Error(`the schema named ${title} is written two different ways in the OpenAPI document`);
    // The rendering that kept its examples is the one kept: the component shows them wherever it is used.
    if (named === undefined || (named['examples'] === undefined && node['examples'] !== undefined)) schemas[title] = node;
    return { $ref: `#/components/schemas/${title}` };
  };

  const hoistContent = (content: unknown) => {
    if (!isObject(content)) return;
    for (const media of Object.values(content)) if (isObject(media) && media['schema'] !== undefined) media['schema'] = hoist(media['schema']);
  };
  for (const operations of Object.values((document['paths'] ?? {}) as Json)) {
    if (!isObject(operations)) continue;
    for (const operation of Object.values(operations)) {
      if (!isObject(operation)) continue;
      if (isObject(operation['requestBody'])) hoistContent(operation['requestBody']['content']);
      for (const response of Object.values((operation['responses'] ?? {}) as Json)) if (isObject(response)) hoistContent(response['content']);
    }
  }
  return document;
}
