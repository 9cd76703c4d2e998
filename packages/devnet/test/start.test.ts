import { afterAll, describe, expect, it } from "vitest";
import { DEVNET_ADDRESSES, type RunningDevnet, startDevnet } from "../src/index.js";

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error));
  return body.result;
}

describe("startDevnet", () => {
  let devnet: RunningDevnet | undefined;
  afterAll(async () => {
    await devnet?.close();
  });

  it("serves both seeded chains on loopback ephemeral ports, then closes", async () => {
    const started = performance.now();
    const lines: string[] = [];
    devnet = await startDevnet({ l1Port: 0, l2Port: 0, log: (line) => lines.push(line) });
    console.log(
      `served devnet: started and seeded in ${Math.round(performance.now() - started)} ms`,
      devnet.seedDurationMs,
    );
    const { l1, l2, addresses } = devnet.deployment;
    expect(l1.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(l2.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(l1.rpcUrl).not.toBe(l2.rpcUrl);
    expect(await rpc(l1.rpcUrl, "eth_chainId")).toBe("0x7a69");
    expect(await rpc(l2.rpcUrl, "eth_chainId")).toBe("0x7a6a");
    expect(addresses).toEqual(DEVNET_ADDRESSES);
    expect(Number(await rpc(l2.rpcUrl, "eth_blockNumber"))).toBe(720_000);
    expect(await rpc(l1.rpcUrl, "eth_getCode", [DEVNET_ADDRESSES.collection, "latest"])).not.toBe("0x");
    expect(lines.some((l) => l.startsWith("seeding L1: bound 6666 agents"))).toBe(true);

    const running = devnet;
    devnet = undefined;
    await running.close();
    await expect(rpc(l1.rpcUrl, "eth_chainId")).rejects.toThrow();
    await expect(rpc(l2.rpcUrl, "eth_chainId")).rejects.toThrow();
  });

  it("refuses a port that is already taken", async () => {
    const { createServer } = await import("node:net");
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startDevnet({ l1Port: port, l2Port: 0 })).rejects.toThrow(
        /port \d+ on 127\.0\.0\.1 is already in use/,
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
