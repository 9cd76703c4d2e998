// Permit2 and the upto proxy against what x402's TypeScript libraries call. x402's proxy ABI, the EIP-712 types its
// client signs and the canonical addresses (@x402/evm), and Uniswap's Permit2 signature-transfer surface, are vendored
// as data in `published/x402-upto-permit2.json`, so this test compares with their definitions, not with our own
// reading of them. (The devnet's upto test drives x402's libraries themselves against the placed code.)
import { readFileSync } from "node:fs";
import {
  type Abi,
  type AbiFunction,
  type Address,
  concat,
  encodeAbiParameters,
  type Hex,
  hashTypedData,
  keccak256,
  toHex,
} from "viem";
import { formatAbiItem } from "viem/utils";
import { describe, expect, it } from "vitest";
import { permit2Abi, x402UptoPermit2ProxyAbi } from "../src/abis.js";
import { PERMIT2_ADDRESS, UPTO_PERMIT2_PROXY_ADDRESS } from "../src/index.js";

interface Surface {
  functions: string[];
  events: string[];
  errors: string[];
}

const published = JSON.parse(readFileSync(new URL("./published/x402-upto-permit2.json", import.meta.url), "utf8")) as {
  source: { x402: { package: string; version: string }; permit2: { repository: string; commit: string } };
  proxy: Surface & { witnessTypeString: string; witnessType: string };
  eip712: { domain: { name: string }; primaryType: string; types: Record<string, { name: string; type: string }[]> };
  permit2: Surface & { domainType: string; tokenPermissionsType: string; witnessTypeStub: string };
  addresses: { permit2: Address; uptoPermit2Proxy: Address };
};

/** What x402 lists and the devnet's proxy leaves out: EIP-2612 gas sponsoring (the devnet token has no permit). */
const PROXY_NOT_INCLUDED = {
  functions: ["settleWithPermit"],
  events: ["SettledWithPermit()"],
  // x402's constructor check (ours has no constructor) and the settleWithPermit error.
  errors: ["InvalidPermit2Address()", "Permit2612AmountMismatch()"],
};

function surface(abi: Abi): Surface {
  const params = (inputs: readonly { type: string; indexed?: boolean }[]) =>
    inputs.map((i) => `${i.type}${i.indexed ? " indexed" : ""}`).join(",");
  return {
    functions: abi
      .filter((item): item is AbiFunction => item.type === "function")
      .map((item) => {
        const outputs = item.outputs.length > 0 ? ` returns (${item.outputs.map((o) => o.type).join(",")})` : "";
        return `${formatAbiItem(item)} ${item.stateMutability}${outputs}`;
      }),
    events: abi.flatMap((item) => (item.type === "event" ? [`${item.name}(${params(item.inputs)})`] : [])),
    errors: abi.flatMap((item) => (item.type === "error" ? [formatAbiItem(item)] : [])),
  };
}

function source(file: string): string {
  return readFileSync(new URL(`../contracts/${file}`, import.meta.url), "utf8");
}

/** The string literal a Solidity constant `name` is set to. */
function constantString(file: string, name: string): string {
  const match = new RegExp(`${name}\\s*=\\s*"([^"]*)"`).exec(source(file));
  if (!match) throw new Error(`${file}: no string constant ${name}`);
  return match[1]!;
}

describe(`X402UptoPermit2Proxy against ${published.source.x402.package}@${published.source.x402.version}`, () => {
  const ours = surface(x402UptoPermit2ProxyAbi as Abi);

  it("has every function x402 lists, with the same inputs, outputs and mutability, but settleWithPermit", () => {
    for (const fn of published.proxy.functions) {
      const name = fn.slice(0, fn.indexOf("("));
      if (PROXY_NOT_INCLUDED.functions.includes(name)) expect(ours.functions.join("\n")).not.toContain(`${name}(`);
      else expect(ours.functions, fn).toContain(fn);
    }
  });

  it("emits and reverts with x402's names (its facilitator maps settle errors by name)", () => {
    for (const ev of published.proxy.events) {
      if (!PROXY_NOT_INCLUDED.events.includes(ev)) expect(ours.events).toContain(ev);
    }
    for (const error of published.proxy.errors) {
      if (!PROXY_NOT_INCLUDED.errors.includes(error)) expect(ours.errors).toContain(error);
    }
    // Named by x402's settle-error mapping though not in its ABI list (the zero-amount refusal).
    expect(ours.errors).toContain("InvalidAmount()");
  });

  it("binds x402's witness type and Permit2's canonical address", () => {
    expect(constantString("X402UptoPermit2Proxy.sol", "WITNESS_TYPE_STRING")).toBe(published.proxy.witnessTypeString);
    expect(source("X402UptoPermit2Proxy.sol")).toContain(`keccak256("${published.proxy.witnessType}")`);
    expect(source("X402UptoPermit2Proxy.sol")).toContain(`ISignatureTransfer(${published.addresses.permit2})`);
  });

  it("sits at x402's canonical addresses", () => {
    expect(PERMIT2_ADDRESS).toBe(published.addresses.permit2);
    expect(UPTO_PERMIT2_PROXY_ADDRESS).toBe(published.addresses.uptoPermit2Proxy);
  });
});

describe(`Permit2 against ${published.source.permit2.repository}@${published.source.permit2.commit.slice(0, 7)}`, () => {
  const ours = surface(permit2Abi as Abi);

  it("has the signature-transfer functions, event and errors x402's proxies rely on", () => {
    for (const fn of published.permit2.functions) expect(ours.functions, fn).toContain(fn);
    for (const ev of published.permit2.events) expect(ours.events).toContain(ev);
    for (const error of published.permit2.errors) expect(ours.errors).toContain(error);
  });

  it("hashes a permit as x402's client signs it: Permit2's domain, stub and TokenPermissions with the proxy's witness", () => {
    const file = "Permit2.sol";
    const text = source(file);
    expect(text).toContain(`keccak256("${published.permit2.domainType}")`);
    expect(text).toContain(`keccak256("${published.eip712.domain.name}")`);
    expect(text).toContain(`keccak256("${published.permit2.tokenPermissionsType}")`);
    const stub = constantString(file, "WITNESS_PERMIT_TYPE_PREFIX");
    expect(stub).toBe(published.permit2.witnessTypeStub);

    // The digest as the contracts compute it, from the strings in our sources ...
    const chainId = 31338;
    const message = {
      permitted: { token: "0x5FbDB2315678afecb367f032d93F642f64180aa3" as Address, amount: 1_000_000n },
      spender: UPTO_PERMIT2_PROXY_ADDRESS,
      nonce: 2n ** 255n + 7n,
      deadline: 1_800_000_000n,
      witness: {
        to: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" as Address,
        facilitator: "0x976EA74026E726554dB657fA54763abd0C3a0aa9" as Address,
        validAfter: 0n,
      },
    };
    const hash = (text: string): Hex => keccak256(toHex(text));
    const word = (types: string[], values: unknown[]): Hex =>
      keccak256(
        encodeAbiParameters(
          types.map((type) => ({ type })),
          values,
        ),
      );
    const witnessTypeString = constantString("X402UptoPermit2Proxy.sol", "WITNESS_TYPE_STRING");
    const witnessTypeHash = /keccak256\("(Witness\([^"]*\))"\)/.exec(source("X402UptoPermit2Proxy.sol"))![1]!;
    const witness = word(
      ["bytes32", "address", "address", "uint256"],
      [hash(witnessTypeHash), message.witness.to, message.witness.facilitator, message.witness.validAfter],
    );
    const permitted = word(
      ["bytes32", "address", "uint256"],
      [hash(published.permit2.tokenPermissionsType), message.permitted.token, message.permitted.amount],
    );
    const struct = word(
      ["bytes32", "bytes32", "address", "uint256", "uint256", "bytes32"],
      [hash(stub + witnessTypeString), permitted, message.spender, message.nonce, message.deadline, witness],
    );
    const domain = word(
      ["bytes32", "bytes32", "uint256", "address"],
      [hash(published.permit2.domainType), hash("Permit2"), BigInt(chainId), PERMIT2_ADDRESS],
    );
    // ... equals the EIP-712 digest of x402's typed data.
    expect(keccak256(concat(["0x1901", domain, struct]))).toBe(
      hashTypedData({
        domain: { ...published.eip712.domain, chainId, verifyingContract: PERMIT2_ADDRESS },
        types: published.eip712.types,
        primaryType: published.eip712.primaryType,
        message,
      }),
    );
  });
});
