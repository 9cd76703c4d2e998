/** A bounded map whose entries expire; the oldest entry goes first when full. */
export interface TtlCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, ttlMs: number): void;
  clear(): void;
}

export function createTtlCache<V>(maxEntries: number, now: () => number): TtlCache<V> {
  const entries = new Map<string, { value: V; expiresAt: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value, ttlMs) {
      if (ttlMs <= 0) return;
      entries.delete(key);
      entries.set(key, { value, expiresAt: now() + ttlMs });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
    clear: () => entries.clear(),
  };
}
