import { b20VariantOf, computeB20Address, isB20Address } from "@agent-tools/contracts";
import { getContractAddress } from "viem";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  B20_SCHEDULE,
  B20_SCHEDULE_TIP,
  B20_WINDOWS,
  b20ScheduleCountWithin,
  createInProcessDevnet,
  DEVNET_ACCOUNTS,
  DEVNET_ADDRESSES,
  DEVNET_CHANNEL_ACCOUNT,
  DEVNET_HOLDER_INDEXES,
  DEVNET_MNEMONIC,
  DEVNET_OPERATOR,
  devnetNetworkConfig,
  seedL1,
} from "../src/index.js";

describe("devnet constants", () => {
  it("lists the first ten accounts of the test mnemonic", () => {
    expect(DEVNET_ACCOUNTS).toHaveLength(10);
    DEVNET_ACCOUNTS.forEach((account, index) => {
      expect(account.index).toBe(index);
      expect(mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index }).address).toBe(account.address);
      expect(privateKeyToAccount(account.privateKey).address).toBe(account.address);
    });
  });

  it("takes the channel key from account 10 of the test mnemonic, funded on both chains", () => {
    expect(mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: 10 }).address).toBe(DEVNET_CHANNEL_ACCOUNT.address);
    expect(privateKeyToAccount(DEVNET_CHANNEL_ACCOUNT.privateKey).address).toBe(DEVNET_CHANNEL_ACCOUNT.address);
    expect(devnetNetworkConfig(31338).accounts).toContainEqual(
      expect.objectContaining({ privateKey: DEVNET_CHANNEL_ACCOUNT.privateKey }),
    );
  });

  it("derives the deployed addresses from the operator's nonces", () => {
    const from = DEVNET_ACCOUNTS[0]!.address;
    expect(DEVNET_ADDRESSES.collection).toBe(getContractAddress({ from, nonce: 0n }));
    expect(DEVNET_ADDRESSES.identityRegistry).toBe(getContractAddress({ from, nonce: 1n }));
    expect(DEVNET_ADDRESSES.agentBindings).toBe(getContractAddress({ from, nonce: 2n }));
    expect(DEVNET_ADDRESSES.usdToken).toBe(getContractAddress({ from, nonce: 0n }));
  });
});

describe("B20 schedule", () => {
  it("has ~40 tokens of both variants at distinct B20 addresses, oldest first", () => {
    expect(B20_SCHEDULE).toHaveLength(40);
    expect(new Set(B20_SCHEDULE.map((t) => t.address)).size).toBe(40);
    expect(new Set(B20_SCHEDULE.map((t) => t.symbol)).size).toBe(40);
    const stables = B20_SCHEDULE.filter((t) => t.variant === "STABLECOIN");
    expect(stables).toHaveLength(10);
    expect(new Set(stables.map((t) => t.currency))).toEqual(new Set(["USD", "EUR", "GBP", "JPY", "CHF", "SGD"]));
    for (const token of B20_SCHEDULE) {
      expect(isB20Address(token.address)).toBe(true);
      // Where the factory's createB20(variant, salt) from the operator puts it, variant in byte 10.
      expect(token.address).toBe(computeB20Address(token.variantId, DEVNET_OPERATOR, token.salt));
      expect(b20VariantOf(token.address)).toBe(token.variantId);
      expect(token.decimals).toBe(token.variant === "ASSET" ? 18 : 6);
      expect(token.blockNumber).toBe(B20_SCHEDULE_TIP - token.ageBlocks);
      expect(token.holderIndex).toBeGreaterThanOrEqual(1);
      expect(token.holderIndex).toBeLessThanOrEqual(9);
    }
    for (let i = 1; i < B20_SCHEDULE.length; i++) {
      expect(B20_SCHEDULE[i]!.blockNumber).toBeGreaterThan(B20_SCHEDULE[i - 1]!.blockNumber);
    }
    // Leaves room for the setup blocks (USD token, its mint, each holder's approval of Permit2).
    expect(B20_SCHEDULE[0]!.blockNumber).toBeGreaterThan(2 + DEVNET_HOLDER_INDEXES.length);
  });

  it("puts a few tokens before 14 days, most within, some within 7 days and the last 1,000 blocks", () => {
    expect(B20_SCHEDULE_TIP).toBeGreaterThan(700_000);
    expect(b20ScheduleCountWithin(Number.POSITIVE_INFINITY)).toBe(40);
    expect(b20ScheduleCountWithin(B20_WINDOWS.fortnight)).toBe(36);
    expect(b20ScheduleCountWithin(B20_WINDOWS.week)).toBe(22);
    expect(b20ScheduleCountWithin(B20_WINDOWS.recent)).toBe(6);
  });
});

describe("seedL1", () => {
  it("refuses a chain where the operator already sent transactions", async () => {
    const devnet = await createInProcessDevnet({ seed: false });
    try {
      const wallet = devnet.l1.walletClient(0);
      await wallet.sendTransaction({ to: DEVNET_ACCOUNTS[1]!.address, value: 1n });
      await expect(seedL1(devnet.l1.publicClient)).rejects.toThrow(/already sent 1 transactions.*fresh chain/);
    } finally {
      await devnet.close();
    }
  });
});
