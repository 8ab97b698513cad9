// Reading GET /openapi.json as a tool that does not follow `$ref` would: every reference to a named schema
// (`#/components/schemas/…`) replaced by a copy of that schema, so a test can look at an operation's schema in place.

type Json = Record<string, unknown>;

/** A copy of `document` with every `$ref` into components.schemas replaced by the schema it names (recursively). */
export function dereferenced<T>(document: T): T {
  const schemas = ((document as Json)['components'] as Json | undefined)?.['schemas'] as Json | undefined ?? {};
  const resolve = (node: unknown, trail: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((member) => resolve(member, trail));
    if (node === null || typeof node !== 'object') return node;
    const reference = (node as Json)['$ref'];
    if (typeof reference === 'string' && reference.startsWith('#/components/schemas/')) {
      const name = reference.slice('#/components/schemas/'.length);
      if (trail.includes(name)) throw new Error(`the schema ${name} refers to itself`);
      if (schemas[name] === undefined) throw new Error(`${reference} names no schema`);
      const { $ref: _reference, ...siblings } = node as Json;
      return { ...(resolve(schemas[name], [...trail, name]) as Json), ...siblings };
    }
    return Object.fromEntries(Object.entries(node).map(([key, member]) => [key, resolve(member, trail)]));
  };
  return resolve(document, []) as T;
}
