import { mainList } from "./render.js";

type Item = Record<string, unknown>;

/** A stable key for an item of a result list. */
export function itemKey(item: Item): string {
  for (const key of ["slug", "address", "identifier", "tokenId"]) {
    if (item[key] !== undefined && item[key] !== null) {
      return item.contract ? `${String(item.contract)}:${String(item[key])}` : String(item[key]);
    }
  }
  return JSON.stringify(item);
}

/** What is new or changed in `current`'s main list since `previous` (items compared whole). */
export function diffResults(previous: Item | undefined, current: Item): { added: Item[]; changed: Item[] } {
  const now = mainList(current)?.[1] ?? [];
  if (!previous) return { added: now, changed: [] };
  const before = new Map((mainList(previous)?.[1] ?? []).map((item) => [itemKey(item), JSON.stringify(item)]));
  const added: Item[] = [];
  const changed: Item[] = [];
  for (const item of now) {
    const old = before.get(itemKey(item));
    if (old === undefined) added.push(item);
    else if (old !== JSON.stringify(item)) changed.push(item);
  }
  return { added, changed };
}
