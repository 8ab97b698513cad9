// The checks the HTTP boundary runs on decoded request input (a parsed JSON body, path parameters, the query):
// characters Postgres cannot store, keys that reach object prototypes, infinite numbers and nesting past the limit.
// Pure: no Fastify.
import { inputPointerLengthMax } from '../limits.ts';

declare global {
  interface String {
    /** ES2024 (Node 20): false when the string holds a surrogate without its pair. */
    isWellFormed(): boolean;
  }
}

/** What is wrong with an input, and a JSON pointer to where (`/` is the whole value). */
export interface InputHazard {
  readonly kind: 'character' | 'prototype_key' | 'nesting' | 'number';
  readonly path: string;
}

export interface HazardChecks {
  /** Look for U+0000 and lone surrogates in strings and keys. */
  readonly characters: boolean;
  /** Look for `__proto__` keys and `constructor` keys holding `prototype`. */
  readonly prototypeKeys: boolean;
  /** Look for numbers JSON.parse made infinite (1e400): no JSON, canonical form or digest can hold them. */
  readonly numbers: boolean;
  /** Deepest nesting of arrays and objects allowed; the whole value counts as level 1 when it is a container. */
  readonly nestingDepthMax: number;
}

/** U+0000 is refused by Postgres text and jsonb; an unpaired surrogate has no UTF-8 form, so the driver would
 * silently store U+FFFD in its place and a signed or digested value would no longer be the one sent. */
export function hasForbiddenCharacter(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** One container being walked: its keys (undefined for an array) and the position of the next child. */
interface Frame {
  readonly container: object;
  readonly keys: readonly string[] | undefined;
  readonly length: number;
  index: number;
}

/** The first hazard in a JSON-like value, or undefined. Iterative, so no nesting can overflow the stack; pointers
 * are built only for the hazard found, so a clean value costs one visit per node and no allocation per leaf. */
export function findInputHazard(value: unknown, checks: HazardChecks): InputHazard | undefined {
  if (typeof value === 'string') return checks.characters && hasForbiddenCharacter(value) ? { kind: 'character', path: '/' } : undefined;
  if (typeof value === 'number') return checks.numbers && !Number.isFinite(value) ? { kind: 'number', path: '/' } : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  const frames: Frame[] = [];
  const enter = (container: object): InputHazard | undefined => {
    if (frames.length >= checks.nestingDepthMax) return { kind: 'nesting', path: pointerOf(frames) };
    const keys = Array.isArray(container) ? undefined : Object.keys(container);
    frames.push({ container, keys, length: keys === undefined ? (container as unknown[]).length : keys.length, index: 0 });
    return undefined;
  };
  const rootHazard = enter(value);
  if (rootHazard) return rootHazard;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    if (frame.index >= frame.length) {
      frames.pop();
      continue;
    }
    const key = frame.keys?.[frame.index];
    frame.index += 1;
    const child = key === undefined ? (frame.container as unknown[])[frame.index - 1] : (frame.container as Record<string, unknown>)[key];
    if (key !== undefined) {
      if (checks.characters && hasForbiddenCharacter(key)) return { kind: 'character', path: pointerOf(frames) };
      if (checks.prototypeKeys && isPrototypeKey(key, child)) return { kind: 'prototype_key', path: pointerOf(frames) };
    }
    if (typeof child === 'string') {
      if (checks.characters && hasForbiddenCharacter(child)) return { kind: 'character', path: pointerOf(frames) };
    } else if (typeof child === 'number') {
      if (checks.numbers && !Number.isFinite(child)) return { kind: 'number', path: pointerOf(frames) };
    } else if (child !== null && typeof child === 'object') {
      const hazard = enter(child);
      if (hazard) return hazard;
    }
  }
  return undefined;
}

/** The keys secure-json-parse and Fastify refuse: `__proto__` anywhere, and `constructor` holding `prototype`
 * (JSON.parse makes both plain own properties, but code that copies or merges them may reach a prototype). */
function isPrototypeKey(key: string, child: unknown): boolean {
  if (key === '__proto__') return true;
  return key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype');
}

/** The JSON pointer (RFC 6901) of the child each frame last visited, from the root down. */
function pointerOf(frames: readonly Frame[]): string {
  if (frames.length === 0) return '/';
  let pointer = '';
  for (const frame of frames) {
    const token = frame.keys === undefined ? String(frame.index - 1) : frame.keys[frame.index - 1]!;
    pointer += `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (pointer.length > inputPointerLengthMax) return `${pointer.slice(0, inputPointerLengthMax)}…`;
  }
  return pointer;
}
