// The request id: the caller's `x-request-id` when it is safe to echo, otherwise one we mint.
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { requestIdLengthMax } from '../limits.ts';

const callerRequestIdPattern = new RegExp(`^[A-Za-z0-9._:-]{1,${requestIdLengthMax}}$`);

export function requestIdFor(request: IncomingMessage): string {
  const offered = request.headers['x-request-id'];
  if (typeof offered === 'string' && callerRequestIdPattern.test(offered)) return offered;
  return mintRequestId();
}

/** Random bytes per minted id. */
const mintedIdBytes = 12;
/** Ids' bytes are drawn from the system's generator in blocks of this many ids: one call into it per block rather
 * than one (and a buffer) per request. */
const mintedIdsPerBlock = 256;
const randomBlock = Buffer.alloc(mintedIdBytes * mintedIdsPerBlock);
let blockOffset = randomBlock.length;

/** A fresh id, also for answers written before there is a request to read one from (malformed HTTP). */
export function mintRequestId(): string {
  if (blockOffset === randomBlock.length) {
    randomFillSync(randomBlock);
    blockOffset = 0;
  }
  const hex = randomBlock.toString('hex', blockOffset, blockOffset + mintedIdBytes);
  blockOffset += mintedIdBytes;
  return `req_${hex}`;
}
