// A webhook receiver on loopback that checks every delivery as the Standard Webhooks specification says, with its own
// implementation (node:crypto HMAC-SHA256 and Ed25519), independent of the service's code: the signed content is
// `${webhook-id}.${webhook-timestamp}.${body}`, each `v1,` signature is base64 HMAC-SHA256 under the secret's bytes
// (the base64 after `whsec_`), `v1a,` is base64 Ed25519 by a key of the gateway's JWKS.
import { createHmac, createPublicKey, timingSafeEqual, verify as verifySignature } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  readonly id: string;
  readonly timestamp: number;
  readonly body: string;
  readonly event: { id: string; type: string; data: { object: Record<string, unknown> } };
  /** The `v1,` signatures, and which of the receiver's secrets each matched (-1: none). */
  readonly hmacMatches: number[];
  /** Whether a `v1a,` signature verified with a key of the JWKS given. */
  readonly ed25519Verified: boolean | undefined;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly deliveries: ReceivedDelivery[];
  /** Refused deliveries (a bad signature, a stale timestamp), with the reason. */
  readonly refused: string[];
  /** The secrets deliveries are checked against, in order (set after creating the endpoint, or rotating). */
  secrets: string[];
  jwks: Array<{ x: string }>;
  /** What the receiver answers: 200 by default; another status, or 'hang' to never answer. */
  answer: number | 'hang';
  /** Called with the number of requests held so far, each time one more is held (answer 'hang'). */
  onHold: ((held: number) => void) | undefined;
  /** Ends the held requests without an answer (their connections reset). */
  dropHeld(): void;
  close(): Promise<void>;
}

function hmacOf(secret: string, content: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return createHmac('sha256', key).update(content).digest('base64');
}

/** Listens on 127.0.0.1:`port` (0: a port the OS picks). */
export async function startWebhookReceiver(port: number, toleranceSeconds = 300): Promise<WebhookReceiver> {
  const hanging: http.ServerResponse[] = [];
  let url = '';
  const receiver: WebhookReceiver = {
    get url() {
      return url;
    },
    deliveries: [],
    refused: [],
    secrets: [],
    jwks: [],
    answer: 200,
    onHold: undefined,
    dropHeld: () => {
      for (const response of hanging.splice(0)) response.destroy();
    },
    close: async () => {
      receiver.dropHeld();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (receiver.answer === 'hang') {
        hanging.push(response);
        receiver.onHold?.(hanging.length);
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(request.headers['webhook-id'] ?? '');
      const timestamp = Number(request.headers['webhook-timestamp']);
      const signatures = String(request.headers['webhook-signature'] ?? '').split(' ');
      const content = `${id}.${timestamp}.${body}`;
      const hmacMatches = signatures.filter((signature) => signature.startsWith('v1,')).map((signature) => {
        const presented = Buffer.from(signature.slice(3));
        return receiver.secrets.findIndex((secret) => {
          const expected = Buffer.from(hmacOf(secret, content));
          return expected.length === presented.length && timingSafeEqual(expected, presented);
        });
      });
      const v1a = signatures.find((signature) => signature.startsWith('v1a,'));
      const ed25519Verified = v1a === undefined || receiver.jwks.length === 0
        ? undefined
        : receiver.jwks.some((jwk) => verifySignature(null, Buffer.from(content), createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }), Buffer.from(v1a.slice(4), 'base64')));
      const fresh = Math.abs(Date.now() / 1000 - timestamp) <= toleranceSeconds;
      if (!fresh || !hmacMatches.some((match) => match >= 0)) {
        receiver.refused.push(!fresh ? 'stale timestamp' : 'no valid signature');
        response.writeHead(400).end();
        return;
      }
      const status = receiver.answer as number;
      if (status >= 200 && status < 300) {
        receiver.deliveries.push({ id, timestamp, body, event: JSON.parse(body), hmacMatches, ed25519Verified });
      }
      response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
