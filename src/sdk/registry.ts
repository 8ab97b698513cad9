// `client.registry`: the tenant's key registry (/v1/registry/keys). Live tenants need the principal's key
// registered for its DID, and every agent key registered under its recognition-proof key_id.
import { checkedAnswer } from './answers.ts';
import type { ClientCore } from './core.ts';
import { SvcArgumentError } from './errors.ts';
import type { SvcSigningKey } from './keys.ts';
import { jsonObjectOf } from './transport.ts';
import type { RegisteredKey, RegisteredKeyList } from './types.ts';

export interface RegisterKeyParams {
  readonly kind: 'principal' | 'agent' | 'operator';
  /** The principal's DID, the agent's key_id, or the operator's DID. */
  readonly subject: string;
  /** The key, or its public key as lowercase hex. */
  readonly publicKey: SvcSigningKey | string;
}

export class Registry {
  readonly #core: ClientCore;

  constructor(core: ClientCore) {
    this.#core = core;
  }

  /** Registers a public key (admin or operator). Not retried on 5xx: list the keys before trying again. */
  async register(params: RegisterKeyParams): Promise<RegisteredKey> {
    const publicKeyHex = typeof params.publicKey === 'string' ? params.publicKey : params.publicKey.publicKeyHex;
    if (!/^[0-9a-f]{64}$/.test(publicKeyHex)) throw new SvcArgumentError('publicKey is 64 lowercase hex digits (32 bytes).');
    const { body, response } = await this.#core.post('/v1/registry/keys', { kind: params.kind, subject: params.subject, public_key_ed25519_hex: publicKeyHex }, { retrySafe: false });
    return checkedAnswer('RegisteredKey', body, response);
  }

  async list(params: { kind?: RegisterKeyParams['kind']; subject?: string; limit?: number; cursor?: string } = {}): Promise<RegisteredKeyList> {
    const { body, response } = await this.#core.get('/v1/registry/keys', { kind: params.kind, subject: params.subject, limit: params.limit, cursor: params.cursor });
    return checkedAnswer('RegisteredKeyPage', body, response);
  }

  /** Revokes a registered key by its `rkey_…` id; revoking twice answers the same key. */
  async revoke(registeredKeyId: string): Promise<RegisteredKey> {
    if (!/^rkey_[0-9a-f]{32}$/.test(registeredKeyId)) throw new SvcArgumentError('A registered key id is rkey_ and 32 hex digits.');
    const response = await this.#core.transport.request({ method: 'DELETE', path: `/v1/registry/keys/${registeredKeyId}`, retrySafe: true, headers: { 'x-tenant-id': this.#core.tenantId } });
    return checkedAnswer('RegisteredKey', jsonObjectOf(response), response);
  }
}
