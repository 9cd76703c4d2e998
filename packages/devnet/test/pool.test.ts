/**
 * The devnet pool lends seeded chains to one borrower after another: each must find the chains as seeded, whatever
 * the one before did to them, with a clock that reads now.
 */
import { agentCollectionAbi, usdTokenAbi } from "@agent-tools/contracts";
import { afterAll, describe, expect, it } from "vitest";
import {
  B20_SCHEDULE_TIP,
  createInProcessDevnetPool,
  DEVNET_ACCOUNTS,
  DEVNET_ADDRESSES,
  DEVNET_USD_UNITS_PER_ACCOUNT,
  devnetOwnerOf,
  type InProcessDevnet,
} from "../src/index.js";

const pool = createInProcessDevnetPool();
afterAll(() => pool.close());

const ownerOf = (devnet: InProcessDevnet, tokenId: bigint) =>
  devnet.l1.publicClient.readContract({
    address: DEVNET_ADDRESSES.collection,
    abi: agentCollectionAbi,
    functionName: "ownerOf",
    args: [tokenId],
  });

async function latestBlock(devnet: InProcessDevnet) {
  return await devnet.l1.publicClient.getBlock({ blockTag: "latest" });
}

describe("a devnet pool", () => {
  it("lends the same L1 again as seeded: a transfer, a mining mode and a clock jump of the previous borrower are undone", async () => {
    const first = await pool.borrow();
    const seededBlock = first.deployment.l1.seededBlockNumber;
    expect(BigInt(seededBlock)).toBe(await first.l1.publicClient.getBlockNumber({ cacheTime: 0 }));
    // Token 1 belongs to account 1; the borrower moves it to account 2, jumps a day ahead and stops mining.
    expect(await ownerOf(first, 1n)).toBe(devnetOwnerOf(1));
    const wallet = first.l1.walletClient(1);
    const hash = await wallet.writeContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "transferFrom",
      args: [DEVNET_ACCOUNTS[1]!.address, DEVNET_ACCOUNTS[2]!.address, 1n],
    });
    await first.l1.publicClient.waitForTransactionReceipt({ hash });
    expect(await ownerOf(first, 1n)).toBe(DEVNET_ACCOUNTS[2]!.address);
    await first.l1.provider.request({ method: "evm_increaseTime", params: [86_400] });
    await first.l1.provider.request({ method: "evm_mine" });
    await first.l1.provider.request({ method: "evm_setAutomine", params: [false] });
    const lent = first.l1.provider;
    await first.close();

    const second = await pool.borrow();
    expect(second.l1.provider, "the seeded L1 is lent again, not seeded anew").toBe(lent);
    expect(await ownerOf(second, 1n)).toBe(devnetOwnerOf(1));
    const latest = await latestBlock(second);
    expect(latest.number).toBe(BigInt(seededBlock));
    expect(Math.abs(Number(latest.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    // Automine is back: a transaction is mined as it is sent.
    const sent = await second.l1.walletClient(1).writeContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "transferFrom",
      args: [DEVNET_ACCOUNTS[1]!.address, DEVNET_ACCOUNTS[3]!.address, 1n],
    });
    const receipt = await second.l1.publicClient.getTransactionReceipt({ hash: sent });
    expect(receipt.status).toBe("success");
    // L2 is seeded anew for each borrower: its B20 schedule ends at the current time.
    expect(await second.l2.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(BigInt(B20_SCHEDULE_TIP));
    const usd = await second.l2.publicClient.readContract({
      address: second.deployment.addresses.usdToken,
      abi: usdTokenAbi,
      functionName: "balanceOf",
      args: [DEVNET_ACCOUNTS[1]!.address],
    });
    expect(usd).toBe(DEVNET_USD_UNITS_PER_ACCOUNT);
    await second.close();
  });

  it("seeds another L1 for a borrower who comes while every one is lent", async () => {
    const [a, b] = await Promise.all([pool.borrow(), pool.borrow()]);
    expect(a.l1.provider).not.toBe(b.l1.provider);
    expect(await ownerOf(a, 7n)).toBe(devnetOwnerOf(7));
    expect(await ownerOf(b, 7n)).toBe(devnetOwnerOf(7));
    await Promise.all([a.close(), b.close()]);
  });
});
