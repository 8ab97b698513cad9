// Whether an Ed25519 public key is one the service would ever verify against. Apart from ed25519.ts because it
// needs point arithmetic (@noble/ed25519), which the SDK, importing ed25519.ts, does not ship.
import { Point } from '@noble/ed25519';

/** A raw Ed25519 public key as 64 lowercase hex digits. */
const publicKeyHexPattern = /^[0-9a-f]{64}$/;

/** A key we would ever verify against: a point on the curve and not of small order (such a key would accept
 * signatures that prove nothing). */
export function isUsableEd25519PublicKey(hex: string): boolean {
  if (!publicKeyHexPattern.test(hex)) return false;
  try {
    return !Point.fromHex(hex).isSmallOrder();
  } catch {
    return false;
  }
}
