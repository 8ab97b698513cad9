// Every vector printed by the real Rust bincode 2 crate (config::standard()) must come out of our encoder
// byte for byte. The test reads each vector's Rust type descriptor, builds our type from it, and compares hex.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bincodeType, encodeBincode, type BincodeType, type EnumVariant, type StructFields } from '../../src/signing/bincode.ts';

interface Vector {
  readonly name: string;
  readonly type: unknown;
  readonly value: unknown;
  readonly hex: string;
}

const vectors = JSON.parse(
  readFileSync(new URL('../vectors/bincode2-standard.json', import.meta.url), 'utf8'),
) as Vector[];

// ---- A small reader of Rust type syntax, enough for the descriptors in the vector file ----

class TypeReader {
  #position = 0;
  constructor(private readonly text: string) {}

  readAll(): BincodeType {
    const type = this.readType();
    this.#skipSpace();
    if (this.#position !== this.text.length) throw new Error(`trailing text in ${this.text}`);
    return type;
  }

  #skipSpace(): void {
    while (this.text[this.#position] === ' ') this.#position++;
  }

  #peek(token: string): boolean {
    this.#skipSpace();
    return this.text.startsWith(token, this.#position);
  }

  #expect(token: string): void {
    if (!this.#peek(token)) throw new Error(`expected ${token} at ${this.#position} in ${this.text}`);
    this.#position += token.length;
  }

  #word(): string {
    this.#skipSpace();
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.#position));
    if (!match) throw new Error(`expected a name at ${this.#position} in ${this.text}`);
    this.#position += match[0].length;
    return match[0];
  }

  #number(): number {
    this.#skipSpace();
    const match = /^\d+/.exec(this.text.slice(this.#position))!;
    this.#position += match[0].length;
    return Number(match[0]);
  }

  readType(): BincodeType {
    for (const [token, type] of [['&str', bincodeType.string], ['&[u8]', bincodeType.bytes], ['()', bincodeType.unit]] as const) {
      if (this.#peek(token)) {
        this.#position += token.length;
        return type;
      }
    }
    if (this.#peek('(')) return this.#tuple();
    if (this.#peek('[')) return this.#array();
    const name = this.#word();
    if (name === 'enum') return this.#enum();
    if (name === 'String') return bincodeType.string;
    if (name === 'Vec') {
      this.#expect('<');
      const element = this.readType();
      this.#expect('>');
      return element.kind === 'u8' ? bincodeType.bytes : bincodeType.vec(element);
    }
    if (name === 'Option') {
      this.#expect('<');
      const inner = this.readType();
      this.#expect('>');
      return bincodeType.option(inner);
    }
    if (name === 'Result') {
      this.#expect('<');
      const ok = this.readType();
      this.#expect(',');
      const err = this.readType();
      this.#expect('>');
      return bincodeType.result(ok, err);
    }
    const primitive = (bincodeType as Record<string, unknown>)[name];
    if (typeof primitive !== 'object') throw new Error(`unknown type ${name}`);
    return primitive as BincodeType;
  }

  #tuple(): BincodeType {
    this.#expect('(');
    const elements = [this.readType()];
    while (this.#peek(',')) {
      this.#expect(',');
      elements.push(this.readType());
    }
    this.#expect(')');
    return bincodeType.tuple(...elements);
  }

  #array(): BincodeType {
    this.#expect('[');
    const element = this.readType();
    this.#expect(';');
    const length = this.#number();
    this.#expect(']');
    return element.kind === 'u8' ? bincodeType.fixedBytes(length) : bincodeType.array(element, length);
  }

  #enum(): BincodeType {
    this.#word(); // the enum's name
    this.#expect('{');
    const variants: EnumVariant[] = [];
    while (!this.#peek('}')) {
      const name = this.#word();
      if (this.#peek('(')) {
        const tuple = this.#tuple();
        variants.push({ name, tuple: tuple.kind === 'tuple' ? tuple.elements : [] });
      } else if (this.#peek('{')) {
        this.#expect('{');
        const fields: [string, BincodeType][] = [];
        while (!this.#peek('}')) {
          const fieldName = this.#word();
          this.#expect(':');
          fields.push([fieldName, this.readType()]);
          if (this.#peek(',')) this.#expect(',');
        }
        this.#expect('}');
        variants.push({ name, struct: fields });
      } else {
        // An explicit discriminant (`X = 5`) does not change the encoding: bincode writes the position.
        if (this.#peek('=')) {
          this.#expect('=');
          this.#number();
        }
        variants.push({ name });
      }
      if (this.#peek(',')) this.#expect(',');
    }
    this.#expect('}');
    return bincodeType.enum(variants);
  }
}

/** Struct descriptors are arrays of [field, type]; a type is a Rust type string, a struct, or ["Vec", struct]. */
function typeFromDescriptor(descriptor: unknown): BincodeType {
  if (typeof descriptor === 'string') return new TypeReader(descriptor).readAll();
  const entries = descriptor as unknown[];
  if (entries[0] === 'Vec') return bincodeType.vec(typeFromDescriptor(entries[1]));
  const fields: StructFields = (entries as [string, unknown][]).map(([name, type]) => [name, typeFromDescriptor(type)]);
  return bincodeType.struct(fields);
}

/** Turns the JSON value of a vector into what our encoder takes (bigints, byte arrays, enum values). */
function valueForType(type: BincodeType, value: unknown): unknown {
  switch (type.kind) {
    case 'u64': case 'u128': case 'usize': case 'i64': case 'i128': case 'isize':
      return typeof value === 'string' ? BigInt(value) : value;
    case 'bytes': case 'fixed_bytes':
      return new Uint8Array(Buffer.from(value as string, 'hex'));
    case 'option':
      return value === null ? null : valueForType(type.inner, value);
    case 'vec': case 'array':
      return (value as unknown[]).map((item) => valueForType(type.element, item));
    case 'tuple':
      return (value as unknown[]).map((item, index) => valueForType(type.elements[index]!, item));
    case 'struct':
      return Object.fromEntries(type.fields.map(([name, fieldType]) => [name, valueForType(fieldType, (value as Record<string, unknown>)[name])]));
    case 'enum':
      return enumValue(type.variants, value as Record<string, unknown>);
    default:
      return value;
  }
}

function enumValue(variants: readonly EnumVariant[], value: Record<string, unknown>): unknown {
  // Result is written {"Ok": v} / {"Err": e}; other enums {variant, index, fields}.
  const resultKey = Object.keys(value).find((key) => key === 'Ok' || key === 'Err');
  if (resultKey) {
    const variant = variants.find((candidate) => candidate.name === resultKey)!;
    return { variant: resultKey, fields: [valueForType(variant.tuple![0]!, value[resultKey])] };
  }
  const index = variants.findIndex((candidate) => candidate.name === value.variant);
  expect(index, 'the vector names the declaration index').toBe(value.index);
  const variant = variants[index]!;
  if (variant.tuple) return { variant: variant.name, fields: (value.fields as unknown[]).map((item, i) => valueForType(variant.tuple![i]!, item)) };
  if (variant.struct) return { variant: variant.name, fields: valueForType(bincodeType.struct(variant.struct), value.fields) };
  return { variant: variant.name };
}

describe('bincode 2 standard vectors (Rust bincode 2.0.1)', () => {
  it('has all 93 vectors', () => {
    expect(vectors).toHaveLength(93);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const type = typeFromDescriptor(vector.type);
    const bytes = encodeBincode(type, valueForType(type, vector.value));
    expect(Buffer.from(bytes).toString('hex')).toBe(vector.hex);
  });
});
