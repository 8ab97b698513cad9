// A small least-recently-used map whose entries also expire: process memory as an optimization only, never as
// the source of truth (docs/architecture.md#architecture).

export class BoundedCache<Key, Value> {
  readonly #entries = new Map<Key, { value: Value; expiresAtMs: number }>();

  constructor(
    private readonly entriesMax: number,
    private readonly ttlMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  get(key: Key): Value | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.nowMs()) {
      this.#entries.delete(key);
      return undefined;
    }
    // Re-inserting moves the key to the young end of the Map's insertion order.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: Key, value: Value): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAtMs: this.nowMs() + this.ttlMs });
    while (this.#entries.size > this.entriesMax) {
      const oldest = this.#entries.keys().next().value as Key;
      this.#entries.delete(oldest);
    }
  }

  delete(key: Key): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
