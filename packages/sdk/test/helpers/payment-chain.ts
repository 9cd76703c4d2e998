import type { AttachedEmbeddedService } from "@agent-tools/server/embedded-process";
import { createPublicClient, erc20Abi, http } from "viem";
import { createAgentToolsClient } from "../../src/index.js";

/** A wallet's balance of the payment asset, read on the payment chain the embedded default prints. */
export async function balanceOf(service: AttachedEmbeddedService, wallet: `0x${string}`): Promise<bigint> {
  const rpc = /L2 \(payments\)\s+(\S+)/.exec(service.output())?.[1];
  if (!rpc) throw new Error(`no payment chain named:\n${service.output()}`);
  const asset = (await createAgentToolsClient({ baseUrl: service.url }).catalog()).items[0]!.accepts[0]!.asset;
  return createPublicClient({ transport: http(rpc) }).readContract({
    address: asset as `0x${string}`,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [wallet],
  });
}
