// A strict bincode 2 encoder (`config::standard()`: little endian, varint integers) for the bytes we sign and chain.
// Types are described as data; every value is validated against its type before a byte is written.
import { isWellFormedText, uuidBytesFromText, valueInvalid } from './encoding.ts';

type IntegerKind = 'u8' | 'u16' | 'u32' | 'u64' | 'u128' | 'usize' | 'i8' | 'i16' | 'i32' | 'i64' | 'i128' | 'isize';

export type StructFields = readonly (readonly [name: string, type: BincodeType])[];

export interface EnumVariant {
  readonly name: string;
  /** Tuple variant: its element types. Struct variant: its fields. Unit variant: absent. */
  readonly tuple?: readonly BincodeType[];
  readonly struct?: StructFields;
}

export type BincodeType =
  | { readonly kind: IntegerKind }
  | { readonly kind: 'bool' | 'f32' | 'f64' | 'char' | 'unit' | 'string' | 'bytes' | 'uuid' }
  | { readonly kind: 'fixed_bytes'; readonly length: number }
  | { readonly kind: 'array'; readonly element: BincodeType; readonly length: number }
  | { readonly kind: 'vec'; readonly element: BincodeType }
  | { readonly kind: 'option'; readonly inner: BincodeType }
  | { readonly kind: 'tuple'; readonly elements: readonly BincodeType[] }
  | { readonly kind: 'struct'; readonly fields: StructFields }
  | { readonly kind: 'enum'; readonly variants: readonly EnumVariant[] };

/** A value of an enum type: the variant by name (bincode writes its declaration index, never a discriminant). */
export interface EnumValue {
  readonly variant: string;
  readonly fields?: readonly unknown[] | Readonly<Record<string, unknown>>;
}

/** Type constructors, named after the Rust types they stand for. */
export const bincodeType = {
  u8: { kind: 'u8' }, u16: { kind: 'u16' }, u32: { kind: 'u32' }, u64: { kind: 'u64' }, u128: { kind: 'u128' },
  usize: { kind: 'usize' }, i8: { kind: 'i8' }, i16: { kind: 'i16' }, i32: { kind: 'i32' }, i64: { kind: 'i64' },
  i128: { kind: 'i128' }, isize: { kind: 'isize' }, bool: { kind: 'bool' }, f32: { kind: 'f32' }, f64: { kind: 'f64' },
  char: { kind: 'char' }, unit: { kind: 'unit' }, string: { kind: 'string' }, bytes: { kind: 'bytes' },
  /** `uuid::Uuid` through serde: a 16-byte slice, so varint 16 then the bytes. Values are UUID text. */
  uuid: { kind: 'uuid' },
  fixedBytes: (length: number): BincodeType => ({ kind: 'fixed_bytes', length }),
  array: (element: BincodeType, length: number): BincodeType => ({ kind: 'array', element, length }),
  vec: (element: BincodeType): BincodeType => ({ kind: 'vec', element }),
  option: (inner: BincodeType): BincodeType => ({ kind: 'option', inner }),
  tuple: (...elements: BincodeType[]): BincodeType => ({ kind: 'tuple', elements }),
  struct: (fields: StructFields): BincodeType => ({ kind: 'struct', fields }),
  enum: (variants: readonly EnumVariant[]): BincodeType => ({ kind: 'enum', variants }),
  result: (ok: BincodeType, err: BincodeType): BincodeType => ({
    kind: 'enum',
    variants: [{ name: 'Ok', tuple: [ok] }, { name: 'Err', tuple: [err] }],
  }),
} as const satisfies Record<string, BincodeType | ((...args: never[]) => BincodeType)>;

const integerRange: Record<IntegerKind, readonly [min: bigint, max: bigint]> = {
  u8: [0n, 0xffn], u16: [0n, 0xffffn], u32: [0n, 0xffff_ffffn], u64: [0n, 2n ** 64n - 1n], usize: [0n, 2n ** 64n - 1n],
  u128: [0n, 2n ** 128n - 1n], i8: [-(2n ** 7n), 2n ** 7n - 1n], i16: [-(2n ** 15n), 2n ** 15n - 1n],
  i32: [-(2n ** 31n), 2n ** 31n - 1n], i64: [-(2n ** 63n), 2n ** 63n - 1n], isize: [-(2n ** 63n), 2n ** 63n - 1n],
  i128: [-(2n ** 127n), 2n ** 127n - 1n],
};

/** Encodes `value` as `type` and returns the bytes. Throws SigningError `signing.value_invalid` naming the field. */
export function encodeBincode(type: BincodeType, value: unknown, field = 'value'): Uint8Array {
  const writer = new ByteWriter();
  writeValue(writer, type, value, field);
  return writer.finish();
}

/** Appends bytes to a buffer that doubles when full; one allocation per few fields at most. */
class ByteWriter {
  #buffer = new Uint8Array(256);
  #view = new DataView(this.#buffer.buffer);
  #length = 0;

  #reserve(extra: number): void {
    if (this.#length + extra <= this.#buffer.length) return;
    let capacity = this.#buffer.length * 2;
    while (capacity < this.#length + extra) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.#buffer.subarray(0, this.#length));
    this.#buffer = grown;
    this.#view = new DataView(grown.buffer);
  }

  byte(value: number): void {
    this.#reserve(1);
    this.#buffer[this.#length++] = value;
  }

  bytes(value: Uint8Array): void {
    this.#reserve(value.length);
    this.#buffer.set(value, this.#length);
    this.#length += value.length;
  }

  /** Little-endian unsigned integer of `byteCount` bytes. */
  unsigned(value: bigint, byteCount: 2 | 4 | 8 | 16): void {
    this.#reserve(byteCount);
    if (byteCount === 2) this.#view.setUint16(this.#length, Number(value), true);
    else if (byteCount === 4) this.#view.setUint32(this.#length, Number(value), true);
    else if (byteCount === 8) this.#view.setBigUint64(this.#length, value, true);
    else {
      this.#view.setBigUint64(this.#length, value & 0xffff_ffff_ffff_ffffn, true);
      this.#view.setBigUint64(this.#length + 8, value >> 64n, true);
    }
    this.#length += byteCount;
  }

  float(value: number, byteCount: 4 | 8): void {
    this.#reserve(byteCount);
    if (byteCount === 4) this.#view.setFloat32(this.#length, value, true);
    else this.#view.setFloat64(this.#length, value, true);
    this.#length += byteCount;
  }

  finish(): Uint8Array {
    return this.#buffer.slice(0, this.#length);
  }
}

/** bincode 2 varint: one byte up to 250, else a marker (fb/fc/fd/fe) and the value as u16/u32/u64/u128 LE. */
function writeVarint(writer: ByteWriter, value: bigint): void {
  if (value <= 250n) {
    writer.byte(Number(value));
  } else if (value <= 0xffffn) {
    writer.byte(0xfb);
    writer.unsigned(value, 2);
  } else if (value <= 0xffff_ffffn) {
    writer.byte(0xfc);
    writer.unsigned(value, 4);
  } else if (value <= 0xffff_ffff_ffff_ffffn) {
    writer.byte(0xfd);
    writer.unsigned(value, 8);
  } else {
    writer.byte(0xfe);
    writer.unsigned(value, 16);
  }
}

/** Integers only: a bigint, or a number that is a safe integer (a larger number may already be rounded). */
function integerValue(kind: IntegerKind, value: unknown, field: string): bigint {
  let integer: bigint;
  if (typeof value === 'bigint') integer = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) integer = BigInt(value);
  else if (typeof value === 'number' && Number.isInteger(value)) valueInvalid(field, `${kind} beyond 2^53 must be given as a bigint`);
  else valueInvalid(field, `${kind} must be an integer`);
  const [min, max] = integerRange[kind];
  if (integer < min || integer > max) valueInvalid(field, `out of range for ${kind} (${min}..${max})`);
  return integer;
}

function writeInteger(writer: ByteWriter, kind: IntegerKind, value: unknown, field: string): void {
  const integer = integerValue(kind, value, field);
  // u8 and i8 are single raw bytes; every wider integer is a varint, signed ones zigzag-mapped first.
  if (kind === 'u8') writer.byte(Number(integer));
  else if (kind === 'i8') writer.byte(Number(integer) & 0xff);
  else if (kind.startsWith('u')) writeVarint(writer, integer);
  else writeVarint(writer, integer >= 0n ? integer * 2n : -integer * 2n - 1n);
}

function writeString(writer: ByteWriter, value: unknown, field: string): void {
  if (typeof value !== 'string') valueInvalid(field, 'must be a string');
  if (!isWellFormedText(value)) valueInvalid(field, 'contains a lone UTF-16 surrogate');
  const utf8 = Buffer.from(value, 'utf8');
  writeVarint(writer, BigInt(utf8.length));
  writer.bytes(utf8);
}

function writeChar(writer: ByteWriter, value: unknown, field: string): void {
  if (typeof value !== 'string' || [...value].length !== 1 || !isWellFormedText(value)) {
    valueInvalid(field, 'must be exactly one Unicode scalar value');
  }
  writer.bytes(Buffer.from(value, 'utf8'));
}

function byteArray(value: unknown, field: string, length?: number): Uint8Array {
  if (!(value instanceof Uint8Array)) valueInvalid(field, 'must be a Uint8Array');
  if (length !== undefined && value.length !== length) valueInvalid(field, `must be exactly ${length} bytes, got ${value.length}`);
  return value;
}

function writeFloat(writer: ByteWriter, kind: 'f32' | 'f64', value: unknown, field: string): void {
  // NaN has many bit patterns; refusing it keeps one value, one encoding.
  if (typeof value !== 'number' || Number.isNaN(value)) valueInvalid(field, `${kind} must be a number`);
  if (kind === 'f32' && Math.fround(value) !== value) valueInvalid(field, 'is not exactly representable as f32');
  writer.float(value, kind === 'f32' ? 4 : 8);
}

function writeValue(writer: ByteWriter, type: BincodeType, value: unknown, field: string): void {
  switch (type.kind) {
    case 'bool':
      if (typeof value !== 'boolean') valueInvalid(field, 'must be a boolean');
      return writer.byte(value ? 1 : 0);
    case 'f32':
    case 'f64':
      return writeFloat(writer, type.kind, value, field);
    case 'char':
      return writeChar(writer, value, field);
    case 'unit':
      if (value !== null) valueInvalid(field, 'unit must be null');
      return;
    case 'string':
      return writeString(writer, value, field);
    case 'bytes': {
      const bytes = byteArray(value, field);
      writeVarint(writer, BigInt(bytes.length));
      return writer.bytes(bytes);
    }
    case 'uuid':
      writeVarint(writer, 16n);
      return writer.bytes(uuidBytesFromText(value, field));
    case 'fixed_bytes':
      return writer.bytes(byteArray(value, field, type.length));
    case 'array':
    case 'vec':
    case 'tuple':
      return writeSequence(writer, type, value, field);
    case 'option':
      if (value === null) return writer.byte(0);
      if (value === undefined) valueInvalid(field, 'is missing (an absent Option is null)');
      writer.byte(1);
      return writeValue(writer, type.inner, value, field);
    case 'struct':
      return writeStruct(writer, type.fields, value, field);
    case 'enum':
      return writeEnum(writer, type.variants, value, field);
    default:
      return writeInteger(writer, type.kind, value, field);
  }
}

function writeSequence(
  writer: ByteWriter,
  type: Extract<BincodeType, { kind: 'array' | 'vec' | 'tuple' }>,
  value: unknown,
  field: string,
): void {
  if (!Array.isArray(value)) valueInvalid(field, 'must be an array');
  if (type.kind === 'vec') writeVarint(writer, BigInt(value.length));
  const expectedLength = type.kind === 'array' ? type.length : type.kind === 'tuple' ? type.elements.length : value.length;
  if (value.length !== expectedLength) valueInvalid(field, `must have exactly ${expectedLength} elements, got ${value.length}`);
  value.forEach((element: unknown, index) => {
    const elementType = type.kind === 'tuple' ? type.elements[index]! : type.element;
    writeValue(writer, elementType, element, `${field}[${index}]`);
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Fields in declaration order; every declared field present, no undeclared one (a typo must not encode). */
function writeStruct(writer: ByteWriter, fields: StructFields, value: unknown, field: string): void {
  if (!isPlainObject(value)) valueInvalid(field, 'must be an object');
  const prefix = field === 'value' ? '' : `${field}.`;
  for (const [name, fieldType] of fields) {
    if (!Object.hasOwn(value, name) || value[name] === undefined) valueInvalid(`${prefix}${name}`, 'is missing');
    writeValue(writer, fieldType, value[name], `${prefix}${name}`);
  }
  const declared = new Set(fields.map(([name]) => name));
  const undeclared = Object.keys(value).find((name) => !declared.has(name));
  if (undeclared !== undefined) valueInvalid(`${prefix}${undeclared}`, 'is not a field of this struct');
}

function writeEnum(writer: ByteWriter, variants: readonly EnumVariant[], value: unknown, field: string): void {
  if (!isPlainObject(value) || typeof value.variant !== 'string') valueInvalid(field, 'must be { variant, fields? }');
  const index = variants.findIndex((variant) => variant.name === value.variant);
  if (index < 0) valueInvalid(field, `has no variant named ${JSON.stringify(value.variant)}`);
  const variant = variants[index]!;
  // The variant index is a u32 varint of the declaration position.
  writeVarint(writer, BigInt(index));
  const fieldsPath = `${field}.${variant.name}`;
  if (variant.tuple) writeSequence(writer, { kind: 'tuple', elements: variant.tuple }, value.fields, fieldsPath);
  else if (variant.struct) writeStruct(writer, variant.struct, value.fields, fieldsPath);
  else if (value.fields !== undefined) valueInvalid(fieldsPath, 'a unit variant carries no fields');
}
