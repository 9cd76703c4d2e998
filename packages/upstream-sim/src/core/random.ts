/**
 * Deterministic pseudo-randomness for the fixtures: the same seed string always gives the same numbers, on every
 * machine and every run, so that a test can rely on a generated value.
 */

/** 32-bit FNV-1a hash of a string. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A number in [0, 1) that depends only on `parts`. */
export function unit(...parts: (string | number)[]): number {
  return mulberry32(hash32(parts.join("\u0000")))();
}

/** mulberry32: a small, fast PRNG with a 32-bit state. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded random source with a few helpers. */
export class Rng {
  private readonly next: () => number;
  constructor(seed: string) {
    this.next = mulberry32(hash32(seed));
  }
  float(): number {
    return this.next();
  }
  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  range(min: number, max: number): number {
    return min + this.next() * (max - min);
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** `bytes` random bytes as lowercase hex, without 0x. */
  hex(bytes: number): string {
    let out = "";
    for (let i = 0; i < bytes; i++) out += this.int(0, 255).toString(16).padStart(2, "0");
    return out;
  }
}

/** A lowercase 0x address derived from a seed string (not a real account: nobody has its key). */
export function seededAddress(seed: string): `0x${string}` {
  return `0x${new Rng(`address:${seed}`).hex(20)}`;
}

/** A 0x-prefixed 32-byte hex value derived from a seed string. */
export function seededBytes32(seed: string): `0x${string}` {
  return `0x${new Rng(`bytes32:${seed}`).hex(32)}`;
}

/** A version-4-shaped UUID derived from a seed string. */
export function seededUuid(seed: string): string {
  const h = new Rng(`uuid:${seed}`).hex(16).split("");
  h[12] = "4";
  h[16] = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  const s = h.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/** A Solana-style base58 address (44 characters) derived from a seed string. */
export function seededBase58(seed: string, length = 44): string {
  const rng = new Rng(`base58:${seed}`);
  let out = "";
  for (let i = 0; i < length; i++) out += BASE58[rng.int(0, BASE58.length - 1)];
  return out;
}
