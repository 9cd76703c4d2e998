/** Words shared by every tool's brief: counts, lists and addresses. */

/** "1,000", "302,400". */
export function count(n: number | bigint): string {
  return n.toLocaleString("en-US");
}

/** "1 token", "3 tokens". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** "a", "a and b", "a, b and c". */
export function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** The first `max` items, then "and N more". */
export function someOf(items: readonly string[], max = 3): string {
  if (items.length <= max) return listOf(items);
  return `${items.slice(0, max).join(", ")} and ${items.length - max} more`;
}

/** "0x7099…79C8": an address in a sentence (responses carry it in full). */
export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}
