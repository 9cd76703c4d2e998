/** Writes grouped while one statement runs (src/store/group-writes.ts): the group commit of channel charges. */
import { describe, expect, it } from "vitest";
import { groupWrites } from "../src/store/group-writes.js";

/** A writer whose statements the test finishes one at a time, recording each group it was given. */
function gatedWriter() {
  const groups: string[][] = [];
  const gates: (() => void)[] = [];
  const write = async (group: string[]) => {
    groups.push(group);
    await new Promise<void>((resolve) => gates.push(resolve));
    if (group.includes("fail")) throw new Error("the statement failed");
    return group.map((request) => `wrote ${request}`);
  };
  /** Finishes the oldest statement once it has started. */
  const finish = async () => {
    while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
  };
  return { groups, write, finish };
}

describe("writes grouped while a statement runs", () => {
  it("the first write goes alone at once; those asked meanwhile go together in the next statement", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r.split(":")[0]!, maxGroup: 10 });
    const first = charge("a:1");
    const later = ["b:1", "c:1", "d:1"].map(charge);
    await w.finish();
    expect(await first).toBe("wrote a:1");
    await w.finish();
    expect(await Promise.all(later)).toEqual(["wrote b:1", "wrote c:1", "wrote d:1"]);
    expect(w.groups).toEqual([["a:1"], ["b:1", "c:1", "d:1"]]);
  });

  it("two writes of one key never share a statement, and a group is at most maxGroup", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r.split(":")[0]!, maxGroup: 2 });
    const all = ["a:1", "a:2", "b:1", "c:1", "a:3"].map(charge);
    for (let i = 0; i < 3; i++) await w.finish();
    await Promise.all(all);
    expect(w.groups).toEqual([["a:1"], ["a:2", "b:1"], ["c:1", "a:3"]]);
  });

  it("a failed statement fails its own group only: writes asked after it still go", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r, maxGroup: 10 });
    const first = charge("x");
    const failing = Promise.all([charge("fail"), charge("y")]);
    await w.finish();
    await expect(first).resolves.toBe("wrote x");
    const after = charge("z");
    await w.finish();
    await expect(failing).rejects.toThrow("the statement failed");
    await w.finish();
    await expect(after).resolves.toBe("wrote z");
    expect(w.groups).toEqual([["x"], ["fail", "y"], ["z"]]);
  });
});
