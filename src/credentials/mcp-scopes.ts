// The MCP scope catalogue (docs/mcp.md): the scopes a restricted key (`svc_rk_…`) may carry, the presets that name
// sets of them, and the one rule that decides whether a granted scope covers a required one.
import { ServiceError } from '../errors/service-error.ts';

export type ScopeLevel = 'read' | 'write';

export interface ScopeDefinition {
  readonly id: string;
  /** `write` implies `read`; a scope whose highest level is `read` cannot be granted `write`. */
  readonly levelMax: ScopeLevel;
  /** What each level lets a key do, in words (the console shows it beside the scope): `write` also grants `read`. */
  readonly grants: { readonly read: string; readonly write?: string };
}

/** The read level of a scope whose routes all change something: no route asks for it yet. */
const readReserved = (writes: string) => `Nothing yet: no route asks for this read level (${writes} needs write).`;

/** The client's catalogue (its scope groups, in its order), listed whole so that keys minted today keep working as
 * the surfaces that need a scope arrive. */
export const scopeDefinitions: readonly ScopeDefinition[] = [
  { id: 'mcp.discovery', levelMax: 'read', grants: { read: 'Principal, intent reads and policy explanations: nothing that changes state.' } },
  { id: 'mcp.signal', levelMax: 'read', grants: { read: 'Standing reads: operator receipts and explanations, the portfolio summary and the signed portfolio export.' } },
  { id: 'mcp.compliance', levelMax: 'read', grants: { read: 'Audit export listing and reading.' } },
  { id: 'mcp.a2a', levelMax: 'write', grants: { read: 'Recognition-proof and mandate verification, and task contracts.', write: 'Mandate import, besides what read grants.' } },
  { id: 'mcp.receipts', levelMax: 'read', grants: { read: 'Protocol and agent receipt reads and verification.' } },
  { id: 'mcp.evidence', levelMax: 'write', grants: { read: readReserved('submitting evidence'), write: 'Payee-signed completion evidence submission.' } },
  { id: 'mcp.spend', levelMax: 'write', grants: { read: readReserved('creating intents and authorizing spend'), write: 'Intent creation, capability verification, spend authorization and agent run reports.' } },
  { id: 'mcp.settlement', levelMax: 'write', grants: { read: readReserved('funding and confirming settlement'), write: 'Funding intents and confirming settlement: moves money, so never in a preset.' } },
  { id: 'mcp.sandbox', levelMax: 'write', grants: { read: readReserved('the sandbox guardrail bootstrap and its evidence'), write: 'Sandbox guardrail bootstrap and evidence.' } },
];

/** What `mcp.spend:write` (a scope at a level) grants, in words; undefined for anything that is not a known scope. */
export function scopeGrant(scope: string): string | undefined {
  const parsed = parseScope(scope);
  if (parsed === undefined) return undefined;
  const { grants } = definitionById.get(parsed.id)!;
  return parsed.level === 'write' ? grants.write : grants.read;
}

export interface ScopePreset {
  readonly id: string;
  readonly description: string;
  readonly scopes: readonly string[];
}

/** Starting sets for restricted keys. `mcp.settlement:write` is in none of them: it must be asked for by name. */
export const scopePresets: readonly ScopePreset[] = [
  {
    id: 'mcp-readonly',
    description: 'Identity, intent reads, standing, audit exports and receipts. No writes.',
    scopes: ['mcp.discovery:read', 'mcp.signal:read', 'mcp.compliance:read', 'mcp.receipts:read'],
  },
  {
    id: 'mcp-spend-operator',
    description: 'Read-only discovery plus intent creation, spend authorization and completion evidence. No settlement.',
    scopes: ['mcp.discovery:read', 'mcp.signal:read', 'mcp.compliance:read', 'mcp.receipts:read', 'mcp.spend:write', 'mcp.evidence:write'],
  },
  {
    id: 'mcp-sandbox-agent',
    description: 'Sandbox guardrail bootstrap and evidence, with discovery and spend authorization.',
    scopes: ['mcp.discovery:read', 'mcp.sandbox:write', 'mcp.spend:write'],
  },
];

const definitionById = new Map(scopeDefinitions.map((definition) => [definition.id, definition]));
const presetById = new Map(scopePresets.map((preset) => [preset.id, preset]));
const levelRank: Record<ScopeLevel, number> = { read: 0, write: 1 };

/** `mcp.spend:write` → its id and level; undefined for anything that is not a catalogue scope at an allowed level. */
export function parseScope(text: string): { readonly id: string; readonly level: ScopeLevel } | undefined {
  const separator = text.lastIndexOf(':');
  const id = text.slice(0, separator);
  const level = text.slice(separator + 1);
  const definition = definitionById.get(id);
  if (separator <= 0 || definition === undefined || (level !== 'read' && level !== 'write')) return undefined;
  return levelRank[level] <= levelRank[definition.levelMax] ? { id, level } : undefined;
}

/**
 * The scopes a key is issued with: presets expanded, each scope checked against the catalogue, duplicates dropped,
 * sorted. Anything unknown is refused (400 `api_key.scope_unknown`, naming it) rather than stored as a scope that no
 * route would ever honour, which the key's holder would only discover when every call failed.
 */
export function normalizeScopes(requested: readonly string[]): string[] {
  const scopes = new Set<string>();
  const unknown: string[] = [];
  for (const entry of requested) {
    const preset = presetById.get(entry);
    if (preset) for (const scope of preset.scopes) scopes.add(scope);
    else if (parseScope(entry)) scopes.add(entry);
    else unknown.push(entry);
  }
  if (unknown.length > 0) {
    throw new ServiceError('api_key.scope_unknown', {
      details: { unknown_scopes: unknown, known_scopes: knownScopes(), known_presets: scopePresets.map((preset) => preset.id) },
    });
  }
  return [...scopes].sort();
}

/** Every scope a key may carry, `id:level` for each level up to the scope's highest. */
export function knownScopes(): string[] {
  return scopeDefinitions.flatMap((definition) => (definition.levelMax === 'write' ? [`${definition.id}:read`, `${definition.id}:write`] : [`${definition.id}:read`]));
}

/** Whether the granted scopes cover `required` (`write` covers `read` of the same scope). */
export function scopeGranted(granted: readonly string[], required: string): boolean {
  const needed = parseScope(required);
  if (needed === undefined) return false;
  return granted.some((entry) => {
    const held = parseScope(entry);
    return held !== undefined && held.id === needed.id && levelRank[held.level] >= levelRank[needed.level];
  });
}
