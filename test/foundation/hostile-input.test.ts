// The boundary's checks on decoded input, as a pure function: which values are refused, and the JSON pointer each
// refusal names. The HTTP side (codes, locations, every route) is in http-contract.test.ts and test/fuzz/.
import { describe, expect, it } from 'vitest';
import { inputPointerLengthMax } from '../../src/limits.ts';
import { findInputHazard, hasForbiddenCharacter } from '../../src/plugins/hostile-input.ts';

const all = { characters: true, prototypeKeys: true, numbers: true, nestingDepthMax: 8 };

describe('forbidden characters', () => {
  it.each([
    ['\u0000', true], ['a\u0000', true], ['\ud800', true], ['\udfff', true], ['a\udbffb', true], ['\udc00\ud800', true],
    ['', false], ['plain', false], ['\u{1f600}', false], ['\ud83d\ude00', false], ['\ufffd', false], ['\u0001', false],
  ])('%j → %s', (text, forbidden) => {
    expect(hasForbiddenCharacter(text)).toBe(forbidden);
  });
});

describe('findInputHazard', () => {
  it('names the first hazard with an escaped JSON pointer', () => {
    expect(findInputHazard({ a: [1, { 'b/c~d': 'x\u0000' }] }, all)).toEqual({ kind: 'character', path: '/a/1/b~1c~0d' });
    expect(findInputHazard({ ok: 1, ['k\ud800']: 1 }, all)).toEqual({ kind: 'character', path: '/k\ud800' });
    expect(findInputHazard('\u0000', all)).toEqual({ kind: 'character', path: '/' });
    const hugeKey = 'k'.repeat(100_000);
    expect(findInputHazard({ [hugeKey]: '\u0000' }, all)).toEqual({ kind: 'character', path: `/${hugeKey.slice(0, inputPointerLengthMax - 1)}…` });
  });

  it('refuses __proto__ anywhere and constructor only when it holds prototype', () => {
    expect(findInputHazard(JSON.parse('{"a":{"__proto__":{}}}'), all)).toEqual({ kind: 'prototype_key', path: '/a/__proto__' });
    expect(findInputHazard(JSON.parse('[{"constructor":{"prototype":1}}]'), all)).toEqual({ kind: 'prototype_key', path: '/0/constructor' });
    expect(findInputHazard({ constructor: 'text', nested: { constructor: { other: 1 } } }, all)).toBeUndefined();
  });

  it('refuses infinite numbers and counts nesting levels without recursion', () => {
    expect(findInputHazard({ n: [Infinity] }, all)).toEqual({ kind: 'number', path: '/n/0' });
    expect(findInputHazard(JSON.parse('[[[[[[[[1]]]]]]]]'), all)).toBeUndefined();
    expect(findInputHazard(JSON.parse('[[[[[[[[[1]]]]]]]]]'), all)).toEqual({ kind: 'nesting', path: '/0/0/0/0/0/0/0/0' });
    const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`) as unknown;
    expect(findInputHazard(deep, { ...all, nestingDepthMax: 300_000 })).toBeUndefined();
  });

  it('checks only what it is asked to', () => {
    const value = JSON.parse('{"__proto__":"\\u0000","n":1}') as unknown;
    expect(findInputHazard(value, { characters: false, prototypeKeys: false, numbers: false, nestingDepthMax: 8 })).toBeUndefined();
    expect(findInputHazard(value, { ...all, prototypeKeys: false })).toEqual({ kind: 'character', path: '/__proto__' });
  });
});
