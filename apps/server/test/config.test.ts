import { DEVNET_ADDRESSES } from "@agent-tools/devnet";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("loadConfig", () => {
  it("defaults to port 8402 on 127.0.0.1 with that public origin", () => {
    const config = loadConfig({});
    expect(config.port).toBe(8402);
    expect(config.host).toBe("127.0.0.1");
    expect(config.publicUrl).toBe("http://127.0.0.1:8402");
    expect(config.anonymousAccess).toBe(true);
  });

  it("takes PUBLIC_URL without a trailing slash", () => {
    expect(loadConfig({ PUBLIC_URL: "https://tools.example.org/" }).publicUrl).toBe("https://tools.example.org");
  });

  it.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["PUBLIC_URL", "not a url"],
    ["ANONYMOUS_ACCESS", "maybe"],
    ["PAY_TO", "0x1234"],
    ["PAYMENT_NETWORK", "base"],
    ["LOG_LEVEL", "loud"],
  ])("rejects %s=%s with a message naming the variable", (variable, value) => {
    let thrown: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toContain(variable);
    expect((thrown as ConfigError).problems.map((p) => p.variable)).toEqual([variable]);
  });

  it("defaults the chain addresses to the embedded devnet's deployment", () => {
    const config = loadConfig({});
    expect(config.l1.collection).toBe(DEVNET_ADDRESSES.collection);
    expect(config.l1.identityRegistry).toBe(DEVNET_ADDRESSES.identityRegistry);
    expect(config.payment.asset).toBe(DEVNET_ADDRESSES.usdToken);
    expect(config.l1.rpcUrl).toBe("http://127.0.0.1:8545");
  });

  it.each([
    ["L1_RPC_URL", "ws://nope"],
    ["COLLECTION_ADDRESS", "0xabc"],
    ["RPC_TIMEOUT_MS", "5"],
  ])("rejects %s=%s", (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(variable));
  });

  it("reads ANONYMOUS_ACCESS=false", () => {
    expect(loadConfig({ ANONYMOUS_ACCESS: "false" }).anonymousAccess).toBe(false);
  });
});
