// EVM address text: `0x` + 40 hex digits, with the EIP-55 mixed-case checksum checked when the case is mixed
// (an all-lowercase or all-uppercase address carries no checksum). Money sent to a mistyped address is gone, so
// a checksum that does not match is refused rather than guessed at.
import { keccak_256 } from '@noble/hashes/sha3.js';

const addressPattern = /^0x[0-9a-fA-F]{40}$/;

/** `0x` + 40 hex digits, either case, checksum not considered. */
export function isEvmAddressText(value: unknown): value is string {
  return typeof value === 'string' && addressPattern.test(value);
}

/** The EIP-55 checksummed spelling of an address (input in any case). */
export function toChecksumAddress(address: string): string {
  if (!isEvmAddressText(address)) throw new Error('toChecksumAddress needs 0x + 40 hex digits');
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let result = '0x';
  for (let index = 0; index < lower.length; index += 1) {
    const byte = hash[index >> 1]!;
    const nibble = index % 2 === 0 ? byte >> 4 : byte & 0x0f;
    result += nibble >= 8 ? lower[index]!.toUpperCase() : lower[index]!;
  }
  return result;
}

/** A usable address: well formed, and when its letters are of mixed case, a valid EIP-55 checksum. */
export function isValidEvmAddress(value: unknown): value is string {
  if (!isEvmAddressText(value)) return false;
  const digits = value.slice(2);
  if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return true;
  return toChecksumAddress(value) === value;
}

/** Addresses compare case-insensitively: the case is only a checksum. */
export function sameEvmAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
