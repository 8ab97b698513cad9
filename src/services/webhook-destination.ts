// Where a webhook may be sent (docs/events.md#destinations): an absolute http(s) URL without credentials or fragment,
// and, for a live tenant, an address on the public internet: private, loopback, link-local, carrier-grade NAT and
// unspecified ranges are refused (so an endpoint cannot make the service call into its own network), unless the
// operator allows them (`SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS`). A sandbox tenant may also use loopback, for a
// receiver on the developer's machine, and plain http. Judged when the endpoint is written (the URL, and an address
// written in it) and again at every attempt, on the addresses the name resolves to, which the connection then uses:
// a name that later resolves elsewhere is refused then.
import { BlockList, isIP } from 'node:net';
import type { Environment } from '../credentials/api-key.ts';
import { ServiceError } from '../errors/service-error.ts';

export interface DestinationPolicy {
  readonly environment: Environment;
  /** The operator's configuration: any address allowed. */
  readonly allowPrivateDestinations: boolean;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const internal = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
  internal.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [['::', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) internal.addSubnet(network, prefix, 'ipv6');

/** The kind of an address: `loopback`, `internal` (private, link-local, …) or `public`. IPv4-mapped IPv6 addresses
 * are judged as the IPv4 address they carry. */
export function addressKind(address: string): 'loopback' | 'internal' | 'public' {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const plain = mapped ? mapped[1]! : address;
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  if (loopback.check(plain, family)) return 'loopback';
  if (internal.check(plain, family)) return 'internal';
  return 'public';
}

/** Whether the policy lets a delivery reach `address`. */
export function addressAllowed(address: string, policy: DestinationPolicy): boolean {
  if (policy.allowPrivateDestinations) return true;
  const kind = addressKind(address);
  return kind === 'public' || (kind === 'loopback' && policy.environment === 'sandbox');
}

const refused = (message: string) => new ServiceError('webhook_endpoint.destination_refused', { message });

/** The URL as stored, or 400 `webhook_endpoint.url_invalid` / `webhook_endpoint.destination_refused`. */
export function checkEndpointUrl(text: string, policy: DestinationPolicy): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ServiceError('webhook_endpoint.url_invalid', { message: 'url is not an absolute URL.' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ServiceError('webhook_endpoint.url_invalid', { message: 'url must be https (or http).' });
  if (url.username !== '' || url.password !== '' || url.hash !== '') throw new ServiceError('webhook_endpoint.url_invalid', { message: 'url must carry no credentials or fragment.' });
  if (url.protocol === 'http:' && policy.environment === 'live' && !policy.allowPrivateDestinations) throw refused('A live endpoint must use https.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = host === 'localhost' || host.endsWith('.localhost') ? '127.0.0.1' : isIP(host) ? host : undefined;
  if (address !== undefined && !addressAllowed(address, policy)) {
    throw refused(`${policy.environment === 'live' ? 'A live' : 'A sandbox'} endpoint may not be sent to ${addressKind(address)} addresses.`);
  }
  return url.toString();
}
