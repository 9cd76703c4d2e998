import { DEVNET_ACCOUNTS, DEVNET_ADDRESSES, DEVNET_MNEMONIC } from "@agent-tools/devnet";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { loadConfig as load } from "../src/config/config.js";
import { FETCH_BAD_PORTS, fetchBlockedPort } from "../src/config/config-env.js";
import { ConfigError } from "../src/config/config-error.js";
import { isPublicTestAddress, PUBLIC_TEST_ADDRESSES } from "../src/config/public-test-accounts.js";
import { DEVNET_PAYMENTS } from "./helpers/devnet-payments.js";

/** The configuration of a server on the local chains (payments to devnet account 0), plus `env`. */
const loadConfig = (env: Record<string, string>) => load({ ...DEVNET_PAYMENTS, ...env });

/** The problems a configuration is refused with, by variable. */
function problemsOf(env: Record<string, string>, options?: { embedded?: boolean }): Record<string, string> {
  try {
    load(env, options);
  } catch (error) {
    if (error instanceof ConfigError) return Object.fromEntries(error.problems.map((p) => [p.variable, p.message]));
    throw error;
  }
  return {};
}

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

  it.each([
    [
      "FACILITATOR_PRIVATE_KEY",
      `${"0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"} `,
      "spaces around",
    ],
    ["FACILITATOR_PRIVATE_KEYS", `0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d,0x5de4111a`, ""],
    ["DATABASE_URL", "postgress://admin:s3cret-pw@db.example.org:5432/tools", ""],
    ["L1_RPC_URL", "ftp://eth-mainnet.example.org/v2/API-KEY-12345", ""],
    ["L2_RPC_URL", "base-mainnet.example.org/v2/API-KEY-12345", ""],
    ["FACILITATOR_URL", "facilitator.example.org?key=API-KEY-12345", ""],
  ])("names %s and its rule without printing the value", (variable, value, hint) => {
    let thrown: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const { message } = thrown as ConfigError;
    expect(message).toContain(variable);
    expect(message).toMatch(/must be/);
    for (const secret of [value.trim(), "s3cret-pw", "API-KEY-12345", "0x5de4111a", "59c6995e998f97a5"]) {
      expect(message).not.toContain(secret);
    }
    if (hint) expect(message).toContain(hint);
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

describe("safe production settings", () => {
  const realKey = generatePrivateKey();
  /** A configuration for Base and Ethereum mainnet, every address and upstream given. */
  const real = {
    PUBLIC_URL: "https://tools.example.org",
    PAYMENT_NETWORK: "eip155:8453",
    PAYMENT_ASSET: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    PAY_TO: "0x2222222222222222222222222222222222222222",
    L2_RPC_URL: "https://base.example.org/v2/KEY",
    COLLECTION_NETWORK: "eip155:1",
    L1_RPC_URL: "https://eth.example.org/v2/KEY",
    COLLECTION_ADDRESS: "0x3333333333333333333333333333333333333333",
    IDENTITY_REGISTRY_ADDRESS: "0x4444444444444444444444444444444444444444",
    MARKETPLACE_URL: "https://api.opensea.io",
    MARKETPLACE_API_KEY: "opensea-key",
    MARKET_DATA_URL: "https://api.dexscreener.com",
    FACILITATOR_PRIVATE_KEY: realKey,
    DATABASE_URL: "postgres://agent_tools:db-password@db.example.org:5432/agent_tools",
  };

  it("starts on a real network with every address and upstream given, and a key of its own", () => {
    const config = load(real);
    expect(config.payment).toMatchObject({ network: "eip155:8453", asset: real.PAYMENT_ASSET, payTo: real.PAY_TO });
    expect(config.l1).toMatchObject({ network: "eip155:1", collection: real.COLLECTION_ADDRESS });
    expect(config.operatorAddress).toBe(real.PAY_TO);
    expect(config.facilitator).toMatchObject({ kind: "local", privateKeys: [realKey] });
    // The keys' plans: OpenSea's free key and DexScreener's public limit, unless told otherwise.
    expect(config.upstream).toMatchObject({ marketplaceRequestsPerMinute: 60, marketDataRequestsPerMinute: 300 });
  });

  it.each([
    "PUBLIC_URL",
    "PAYMENT_ASSET",
    "L2_RPC_URL",
    "L1_RPC_URL",
    "COLLECTION_ADDRESS",
    "IDENTITY_REGISTRY_ADDRESS",
    "MARKETPLACE_URL",
    "MARKETPLACE_API_KEY",
    "MARKET_DATA_URL",
  ])("on a real network, refuses a configuration without %s, naming it: no devnet value stands in", (variable) => {
    const problems = problemsOf({ ...real, [variable]: "" });
    expect(Object.keys(problems)).toEqual([variable]);
    expect(problems[variable]).toMatch(/must be set on eip155:(8453|1)/);
  });

  it("needs PAY_TO and a facilitator outside the embedded default", () => {
    const problems = problemsOf({});
    expect(problems.PAY_TO).toMatch(/must be set/);
    expect(problems.FACILITATOR_URLS).toMatch(/FACILITATOR_PRIVATE_KEY .*must be set/);
    expect(problemsOf({ PAY_TO: real.PAY_TO, FACILITATOR_URL: "https://facilitator.example" })).toEqual({});
  });

  it("refuses a settlement batch window that would leave a payment less time than a price's shortest timeout", () => {
    const tight = { ...DEVNET_PAYMENTS, PAYMENT_TIMEOUT_SECONDS: "12", SETTLEMENT_BATCH_WINDOW_MS: "5000" };
    const problems = problemsOf(tight);
    expect(Object.keys(problems)).toEqual(["SETTLEMENT_BATCH_WINDOW_MS"]);
    expect(problems.SETTLEMENT_BATCH_WINDOW_MS).toMatch(
      /PAYMENT_TIMEOUT_SECONDS=12.*raise PAYMENT_TIMEOUT_SECONDS to 15/,
    );
    // Room for the window, or no batches to wait for: the same timeout is fine.
    expect(problemsOf({ ...tight, PAYMENT_TIMEOUT_SECONDS: "15" })).toEqual({});
    expect(problemsOf({ ...tight, SETTLEMENT_BATCH_SIZE: "1" })).toEqual({});
    expect(problemsOf({ ...tight, SETTLEMENT_BATCH_WINDOW_MS: "2000" })).toEqual({});
  });

  it("takes several facilitators in order, each with its key or none, and Coinbase's with a CDP key", () => {
    const config = load({
      ...real,
      FACILITATOR_PRIVATE_KEY: "",
      FACILITATOR_URLS: "https://a.example/x402, cdp, https://b.example",
      FACILITATOR_API_KEYS: "key-a,,",
      CDP_API_KEY_ID: "id",
      CDP_API_KEY_SECRET: "secret",
    });
    expect(config.facilitator).toEqual({
      kind: "http",
      endpoints: [
        { kind: "url", url: "https://a.example/x402", apiKey: "key-a" },
        { kind: "cdp", apiKeyId: "id", apiKeySecret: "secret" },
        { kind: "url", url: "https://b.example" },
      ],
    });
  });

  it.each([
    [
      { FACILITATOR_URLS: "https://a.example" },
      "FACILITATOR_PRIVATE_KEY",
      /either through facilitators over HTTP or with keys/,
    ],
    [
      { FACILITATOR_URLS: "https://a.example", FACILITATOR_URL: "https://b.example", FACILITATOR_PRIVATE_KEY: "" },
      "FACILITATOR_URLS",
      /set one of them/,
    ],
    [
      { FACILITATOR_URLS: "https://a.example", FACILITATOR_API_KEYS: "a,b", FACILITATOR_PRIVATE_KEY: "" },
      "FACILITATOR_API_KEYS",
      /2 keys for 1 facilitator/,
    ],
    [{ FACILITATOR_URLS: "cdp", FACILITATOR_PRIVATE_KEY: "" }, "CDP_API_KEY_ID", /CDP_API_KEY_SECRET must be set/],
    [
      { FACILITATOR_URLS: "https://a.example,ftp://b", FACILITATOR_PRIVATE_KEY: "" },
      "FACILITATOR_URLS",
      /http\(s\) URLs/,
    ],
  ])("refuses facilitators configured two ways or half: %o", (env, variable, says) => {
    const problems = problemsOf({ ...real, ...env });
    expect(problems[variable]).toMatch(says);
  });

  it("signs receipts with RECEIPT_SIGNER_PRIVATE_KEY on a real network, and none without it", () => {
    const receiptKey = generatePrivateKey();
    expect(load({ ...real, RECEIPT_SIGNER_PRIVATE_KEY: receiptKey }).receiptSignerKey).toBe(receiptKey);
    expect(load(real).receiptSignerKey).toBeUndefined();
    // On the local chains, the devnet's operator key signs them unless another is given.
    expect(loadConfig({}).receiptSignerKey).toBe(DEVNET_ACCOUNTS[0]!.privateKey);
    expect(problemsOf({ ...real, RECEIPT_SIGNER_PRIVATE_KEY: "0x1234" })).toEqual({
      RECEIPT_SIGNER_PRIVATE_KEY: expect.stringMatching(/32-byte hex private key/),
    });
  });

  it("refuses a mainnet without DATABASE_URL, saying what the embedded store would mean and how to choose it", () => {
    const problems = problemsOf({ ...real, DATABASE_URL: "" });
    expect(Object.keys(problems)).toEqual(["DATABASE_URL"]);
    expect(problems.DATABASE_URL).toMatch(/^must be set on eip155:8453 \(PAYMENT_NETWORK\), a mainnet/);
    expect(problems.DATABASE_URL).toMatch(/PGlite in DATA_DIR, \.agent-tools\/data/);
    expect(problems.DATABASE_URL).toMatch(/one instance only \(no second instance, no scale-out\)/);
    expect(problems.DATABASE_URL).toMatch(/backed up by copying its directory while the server is stopped/);
    expect(problems.DATABASE_URL).toMatch(/set EMBEDDED_STORE=true$/);
    // Setting DATA_DIR alone is not the choice: it has a default, and says nothing of a mainnet.
    expect(Object.keys(problemsOf({ ...real, DATABASE_URL: "", DATA_DIR: "/var/lib/agent-tools" }))).toEqual([
      "DATABASE_URL",
    ]);
  });

  it("starts a mainnet on the embedded store when EMBEDDED_STORE=true says so, and never with both stores", () => {
    const config = load({ ...real, DATABASE_URL: "", EMBEDDED_STORE: "true", DATA_DIR: "/var/lib/agent-tools" });
    expect(config.store).toEqual({ kind: "pglite", dataDir: "/var/lib/agent-tools" });
    expect(load(real).store).toEqual({ kind: "postgres", url: real.DATABASE_URL });
    expect(Object.keys(problemsOf({ ...real, EMBEDDED_STORE: "true" }))).toEqual(["EMBEDDED_STORE"]);
  });

  it.each(["eip155:84532", "eip155:11155111"])(
    "lets a test network (%s) keep its ledger in the embedded store",
    (network) => {
      const config = load({ ...real, PAYMENT_NETWORK: network, DATABASE_URL: "" });
      expect(config.store).toEqual({ kind: "pglite", dataDir: ".agent-tools/data" });
    },
  );

  it.each([
    ["L1_RPC_URL", "https://eth.example.org:9/v2/KEY"],
    ["L2_RPC_URL", "http://127.0.0.1:6000"],
    ["FACILITATOR_URL", "http://127.0.0.1:9"],
    ["FACILITATOR_URLS", "https://x402.example, http://127.0.0.1:9"],
    ["MARKETPLACE_URL", "https://api.example:25"],
    ["MARKET_DATA_URL", "https://data.example:6666"],
    ["PUBLIC_URL", "https://tools.example.org:10080"],
  ])("refuses %s on a port fetch refuses to connect to, naming the variable and the port", (variable, url) => {
    const env = {
      ...real,
      [variable]: url,
      ...(variable.startsWith("FACILITATOR_URL") ? { FACILITATOR_PRIVATE_KEY: "" } : {}),
    };
    const problems = problemsOf(env);
    expect(Object.keys(problems)).toEqual([variable]);
    const port = new URL(url.split(",").at(-1)!.trim()).port;
    expect(problems[variable]).toMatch(
      new RegExp(`^is on port ${port}, which fetch refuses to connect to \\(a bad port of the Fetch standard\\)`),
    );
    // The same URL on another port is fine.
    expect(problemsOf({ ...env, [variable]: url.replace(`:${port}`, ":8443") })).toEqual({});
  });

  it("refuses each port Node's own fetch refuses before connecting", async () => {
    // fetch blocks a bad port before it opens any connection: nothing is sent, not even on loopback.
    for (const port of FETCH_BAD_PORTS) {
      const refused = await fetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
      expect((refused as Error & { cause?: Error }).cause?.message, `port ${port}`).toBe("bad port");
      expect(fetchBlockedPort(`http://127.0.0.1:${port}/`)).toBe(port);
    }
    expect(fetchBlockedPort("http://127.0.0.1:8545")).toBeUndefined();
    expect(fetchBlockedPort("https://api.example")).toBeUndefined();
  });

  it("lets the embedded default set its own recipient and key", () => {
    expect(problemsOf({}, { embedded: true })).toEqual({});
  });

  it.each([
    ["PAY_TO", { PAY_TO: DEVNET_ACCOUNTS[0]!.address }],
    ["OPERATOR_ADDRESS", { OPERATOR_ADDRESS: PUBLIC_TEST_ADDRESSES[15]! }],
    ["FACILITATOR_PRIVATE_KEY", { FACILITATOR_PRIVATE_KEY: DEVNET_ACCOUNTS[3]!.privateKey }],
    ["FACILITATOR_PRIVATE_KEYS", { FACILITATOR_PRIVATE_KEYS: `${realKey},${DEVNET_ACCOUNTS[9]!.privateKey}` }],
    ["RECEIPT_SIGNER_PRIVATE_KEY", { RECEIPT_SIGNER_PRIVATE_KEY: DEVNET_ACCOUNTS[0]!.privateKey }],
  ])("refuses %s of the public test mnemonic on a real payment chain", (variable, env) => {
    const problems = problemsOf({ ...real, ...env });
    expect(Object.keys(problems)).toEqual([variable]);
    expect(problems[variable]).toMatch(/public test mnemonic.*eip155:8453/);
    // Even in the embedded default's mode: the check is about the chain, not the mode.
    expect(Object.keys(problemsOf({ ...real, ...env }, { embedded: true }))).toEqual([variable]);
  });

  it.each(["eip155:31337", "eip155:31338", "eip155:1337"])("accepts them on the local chain %s", (network) => {
    expect(problemsOf({ ...DEVNET_PAYMENTS, PAYMENT_NETWORK: network })).toEqual({});
  });

  it("knows the first 20 accounts of the public test mnemonic", () => {
    const derived = Array.from(
      { length: 20 },
      (_, i) => mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: i }).address,
    );
    expect(PUBLIC_TEST_ADDRESSES).toEqual(derived);
    expect(isPublicTestAddress(derived[7]!.toLowerCase())).toBe(true);
    expect(isPublicTestAddress(privateKeyToAccount(realKey).address)).toBe(false);
  });
});
