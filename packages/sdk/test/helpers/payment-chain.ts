import type { AttachedEmbeddedService } from "@agent-tools/server/embedded-process";
import { createPublicClient, erc20Abi, http } from "viem";
import { createAgentToolsClient } from "../../src/index.js";

/** The JSON-RPC URL of the payment chain the embedded default prints. */
export function paymentChainRpc(service: AttachedEmbeddedService): string {
  const rpc = /L2 \(payments\)\s+(\S+)/.exec(service.output())?.[1];
  if (!rpc) throw new Error(`no payment chain named:\n${service.output()}`);
  return rpc;
}

/** A wallet's balance of the payment asset, read on the payment chain the embedded default prints. */
export async function balanceOf(service: AttachedEmbeddedService, wallet: `0x${string}`): Promise<bigint> {
  const rpc = paymentChainRpc(service);
  const asset = (await createAgentToolsClient({ baseUrl: service.url }).catalog()).items[0]!.accepts[0]!.asset;
  return createPublicClient({ transport: http(rpc) }).readContract({
    address: asset as `0x${string}`,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [wallet],
  });
}
