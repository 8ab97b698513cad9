// The request id: the caller's `x-request-id` when it is safe to echo, otherwise one we mint.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { requestIdLengthMax } from '../limits.ts';

const callerRequestIdPattern = new RegExp(`^[A-Za-z0-9._:-]{1,${requestIdLengthMax}}$`);

export function requestIdFor(request: IncomingMessage): string {
  const offered = request.headers['x-request-id'];
  if (typeof offered === 'string' && callerRequestIdPattern.test(offered)) return offered;
  return mintRequestId();
}

/** A fresh id, also for answers written before there is a request to read one from (malformed HTTP). */
export function mintRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}
