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
  /** Resolves once `n` statements have started. */
  const started = async (n: number) => {
    while (groups.length < n) await new Promise((resolve) => setImmediate(resolve));
  };
  /** Finishes the oldest statement once it has started. */
  const finish = async () => {
    while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
  };
  return { groups, write, started, finish };
}

describe("writes grouped while a statement runs", () => {
  it("writes asked in one turn of the event loop share a statement; those asked while it runs share the next", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r.split(":")[0]!, maxGroup: 10 });
    const first = ["a:1", "b:1"].map(charge);
    await w.started(1);
    const later = ["c:1", "d:1", "e:1"].map(charge);
    await w.finish();
    expect(await Promise.all(first)).toEqual(["wrote a:1", "wrote b:1"]);
    await w.finish();
    expect(await Promise.all(later)).toEqual(["wrote c:1", "wrote d:1", "wrote e:1"]);
    expect(w.groups).toEqual([
      ["a:1", "b:1"],
      ["c:1", "d:1", "e:1"],
    ]);
  });

  it("a write asked alone goes alone, and the next one after it is done goes alone too", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r, maxGroup: 10 });
    const first = charge("a");
    await w.finish();
    expect(await first).toBe("wrote a");
    const second = charge("b");
    await w.finish();
    expect(await second).toBe("wrote b");
    expect(w.groups).toEqual([["a"], ["b"]]);
  });

  it("two writes of one key never share a statement, and a group is at most maxGroup", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r.split(":")[0]!, maxGroup: 2 });
    const all = ["a:1", "a:2", "b:1", "c:1", "a:3"].map(charge);
    for (let i = 0; i < 3; i++) await w.finish();
    await Promise.all(all);
    expect(w.groups).toEqual([["a:1", "b:1"], ["a:2", "c:1"], ["a:3"]]);
  });

  it("a failed statement fails its own group only: writes asked after it still go", async () => {
    const w = gatedWriter();
    const charge = groupWrites({ write: w.write, keyOf: (r: string) => r, maxGroup: 10 });
    const first = charge("x");
    await w.started(1);
    const failing = Promise.all([charge("fail"), charge("y")]);
    const failed = expect(failing).rejects.toThrow("the statement failed");
    await w.finish();
    await expect(first).resolves.toBe("wrote x");
    await w.started(2);
    const after = charge("z");
    await w.finish();
    await failed;
    await w.finish();
    await expect(after).resolves.toBe("wrote z");
    expect(w.groups).toEqual([["x"], ["fail", "y"], ["z"]]);
  });
});
