/**
 * A refund as the operator sends it before booking it: a transfer of the payment asset from PAY_TO (devnet account
 * 0, whose key the devnet holds unlocked) back to the payer, on the embedded default's payment chain. Plain JSON-RPC:
 * the CLI's tests need no chain library.
 */

/** A JSON-RPC call to `url`: its result, or an error with the node's message. */
export async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** The L2's URL, as the embedded default prints it. */
export function l2UrlOf(output: string): string {
  const url = /L2 \(payments\)\s+(http:\/\/\S+)/.exec(output)?.[1];
  if (!url) throw new Error(`the embedded default printed no L2:\n${output}`);
  return url;
}

/** Sends `amount` units of `asset` from `from` to `to`; resolves with the transaction once it is mined, successful. */
export async function sendTransfer(
  l2Url: string,
  transfer: { from: string; asset: string; to: string; amount: bigint },
): Promise<`0x${string}`> {
  // ERC-20 transfer(address,uint256): its selector, then the two words.
  const word = (hex: string) => hex.replace(/^0x/, "").toLowerCase().padStart(64, "0");
  const data = `0xa9059cbb${word(transfer.to)}${word(transfer.amount.toString(16))}`;
  const hash = (await rpc(l2Url, "eth_sendTransaction", [
    { from: transfer.from, to: transfer.asset, data },
  ])) as `0x${string}`;
  // The devnet mines each transaction as it is sent: its receipt is there once the hash is.
  const receipt = (await rpc(l2Url, "eth_getTransactionReceipt", [hash])) as { status: string } | null;
  if (receipt?.status !== "0x1") throw new Error(`the transfer ${hash} is not mined successfully`);
  return hash;
}

/** `wallet`'s balance of `asset` on the L2 (ERC-20 balanceOf, read at the latest block). */
export async function balanceOn(l2Url: string, asset: string, wallet: string): Promise<bigint> {
  const data = `0x70a08231${wallet.replace(/^0x/, "").toLowerCase().padStart(64, "0")}`;
  return BigInt((await rpc(l2Url, "eth_call", [{ to: asset, data }, "latest"])) as string);
}
