// The batch-settlement contracts against what x402's TypeScript libraries call. The ABI, the EIP-712 type strings and
// the canonical addresses of @x402/evm are vendored as data in `published/x402-batch-settlement.json`, so this test
// compares with x402's definition, not with our own reading of it. (The devnet's batch-settlement test drives the
// libraries themselves against the deployed code.)
import { readFileSync } from "node:fs";
import type { Abi, AbiFunction } from "viem";
import { formatAbiItem } from "viem/utils";
import { describe, expect, it } from "vitest";
import { batchSettlementAbi, erc3009DepositCollectorAbi } from "../src/abis.js";
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_DOMAIN_NAME,
  BATCH_SETTLEMENT_DOMAIN_VERSION,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
} from "../src/index.js";

const published = JSON.parse(
  readFileSync(new URL("./published/x402-batch-settlement.json", import.meta.url), "utf8"),
) as {
  source: { package: string; version: string };
  functions: string[];
  events: string[];
  typeStrings: Record<"ChannelConfig" | "Voucher" | "Refund" | "ClaimBatch", string>;
  domain: { name: string; version: string };
  addresses: { batchSettlement: string; erc3009DepositCollector: string };
};

function functionLine(item: AbiFunction): string {
  const outputs = item.outputs.length > 0 ? ` returns (${item.outputs.map((o) => o.type).join(",")})` : "";
  return `${formatAbiItem(item)} ${item.stateMutability}${outputs}`;
}

const ours = (batchSettlementAbi as Abi).filter((item): item is AbiFunction => item.type === "function");

describe(`BatchSettlement against ${published.source.package}@${published.source.version}`, () => {
  it("has every function x402 calls, with the same inputs, outputs and mutability", () => {
    const lines = ours.map(functionLine);
    for (const fn of published.functions) expect(lines, fn).toContain(fn);
  });

  it("emits the events x402 parses with the same indexed layout", () => {
    const events = (batchSettlementAbi as Abi)
      .filter((item) => item.type === "event")
      .map((item) => `${item.name}(${item.inputs.map((i) => `${i.type}${i.indexed ? " indexed" : ""}`).join(",")})`);
    for (const ev of published.events) expect(events).toContain(ev);
  });

  it("uses x402's EIP-712 domain and type strings", () => {
    expect(BATCH_SETTLEMENT_DOMAIN_NAME).toBe(published.domain.name);
    expect(BATCH_SETTLEMENT_DOMAIN_VERSION).toBe(published.domain.version);
    const names = ours.map((f) => f.name);
    for (const [constant, type] of [
      ["CHANNEL_CONFIG_TYPEHASH", "ChannelConfig"],
      ["VOUCHER_TYPEHASH", "Voucher"],
      ["REFUND_TYPEHASH", "Refund"],
      ["CLAIM_BATCH_TYPEHASH", "ClaimBatch"],
    ] as const) {
      expect(names, type).toContain(constant);
    }
    // The digests themselves are compared with x402's on the devnet (test/batch-settlement.test.ts there).
    const source = readFileSync(new URL("../contracts/BatchSettlement.sol", import.meta.url), "utf8");
    for (const type of Object.values(published.typeStrings)) expect(source).toContain(`"${type}"`);
    expect(source).toContain(`keccak256("${published.domain.name}")`);
    expect(source).toContain(`keccak256("${published.domain.version}")`);
  });

  it("sits at x402's canonical addresses, and the collector only serves that settlement contract", () => {
    expect(BATCH_SETTLEMENT_ADDRESS).toBe(published.addresses.batchSettlement);
    expect(ERC3009_DEPOSIT_COLLECTOR_ADDRESS).toBe(published.addresses.erc3009DepositCollector);
    const collector = readFileSync(new URL("../contracts/Erc3009DepositCollector.sol", import.meta.url), "utf8");
    expect(collector).toContain(`BATCH_SETTLEMENT = ${published.addresses.batchSettlement};`);
    expect((erc3009DepositCollectorAbi as Abi).some((i) => i.type === "function" && i.name === "collect")).toBe(true);
  });
});
