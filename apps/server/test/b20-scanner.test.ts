import { b20FactoryAbi, b20TokenAddress } from "@agent-tools/contracts";
import {
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  HttpRequestError,
  type PublicClient,
} from "viem";
import { describe, expect, it } from "vitest";
import { createB20Scanner } from "../src/chain/b20-scanner.js";

/** A chain of `tip` blocks without B20 tokens, counting its eth_getLogs calls; `isB20Initialized` fails as told. */
function fakeChain(tip: bigint, isB20Failure?: Error) {
  const ranges: [bigint, bigint][] = [];
  const client = {
    getBlockNumber: async () => tip,
    getLogs: async ({ fromBlock, toBlock }: { fromBlock: bigint; toBlock: bigint }) => {
      ranges.push([fromBlock, toBlock]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return [];
    },
    readContract: async () => {
      if (isB20Failure) throw isB20Failure;
      return false;
    },
  };
  return { client: client as unknown as PublicClient, ranges };
}

const callError = (cause: Error) =>
  new ContractFunctionExecutionError(cause as never, {
    abi: b20FactoryAbi,
    functionName: "isB20Initialized",
    args: [b20TokenAddress(0, 7)],
    contractAddress: "0xB20f000000000000000000000000000000000000",
  });

describe("B20 scanner", () => {
  it("reads a window once even when scans arrive together", async () => {
    const chain = fakeChain(100_000n);
    const scanner = createB20Scanner({ client: chain.client });
    await Promise.all([scanner.scanCreated(50_000), scanner.scanCreated(50_000), scanner.scanCreated(1_000)]);
    expect(chain.ranges).toHaveLength(5);
    expect(new Set(chain.ranges.map(([from]) => from)).size).toBe(5);
    expect(chain.ranges.map(([from]) => from).sort((a, b) => Number(a - b))[0]).toBe(50_001n);
  });

  it("says an address is no B20 token when the factory call reverts", async () => {
    const revert = new ContractFunctionRevertedError({ abi: b20FactoryAbi, functionName: "isB20Initialized" });
    const scanner = createB20Scanner({ client: fakeChain(10n, callError(revert)).client });
    expect(await scanner.inspect(b20TokenAddress(0, 7))).toBeNull();
  });

  it("lets a chain outage through instead of calling the address no B20 token", async () => {
    const outage = new HttpRequestError({ url: "http://rpc.invalid", status: 503 });
    const scanner = createB20Scanner({ client: fakeChain(10n, callError(outage)).client });
    await expect(scanner.inspect(b20TokenAddress(0, 7))).rejects.toBeInstanceOf(HttpRequestError);
  });
});
