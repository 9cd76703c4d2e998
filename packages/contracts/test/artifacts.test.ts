import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { type Abi, toEventSelector, toFunctionSelector } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ARTIFACTS_DIR,
  type Artifact,
  CONTRACT_NAMES,
  type CompileResult,
  type ContractName,
  camelName,
  compileAll,
} from "../scripts/solc.js";
import * as abis from "../src/abis.js";
import * as bytecode from "../src/bytecode.js";
import { B20_CREATED_TOPIC, ERC7496_INTERFACE_ID } from "../src/index.js";

let fresh: CompileResult;

beforeAll(() => {
  fresh = compileAll();
});

function committed(name: ContractName): Artifact {
  return JSON.parse(readFileSync(path.join(ARTIFACTS_DIR, `${name}.json`), "utf8")) as Artifact;
}

function abiOf(name: ContractName): Abi {
  return fresh.artifacts[name].abi as Abi;
}

function signatures(name: ContractName, type: "function" | "event"): string[] {
  return abiOf(name)
    .filter((item) => item.type === type)
    .map((item) => {
      const entry = item as { name: string; inputs: readonly { type: string; components?: unknown }[] };
      return `${entry.name}(${entry.inputs.map((i) => formatType(i)).join(",")})`;
    });
}

function formatType(param: { type: string; components?: unknown }): string {
  if (!param.type.startsWith("tuple")) return param.type;
  const components = param.components as { type: string; components?: unknown }[];
  return `(${components.map(formatType).join(",")})${param.type.slice("tuple".length)}`;
}

describe("artifacts are up to date with contracts/*.sol", () => {
  it("has exactly one artifact per contract", () => {
    const files = readdirSync(ARTIFACTS_DIR)
      .filter((f) => f.endsWith(".json"))
      .sort();
    expect(files).toEqual(CONTRACT_NAMES.map((n) => `${n}.json`).sort());
  });

  it.each(CONTRACT_NAMES)("%s: sourceHash, ABI and bytecode match a fresh compile (run `pnpm compile`)", (name) => {
    const artifact = committed(name);
    const expected = fresh.artifacts[name];
    expect(artifact.sourceHash, "sources changed since the last compile").toBe(fresh.sourceHash);
    expect(artifact.compiler.version).toBe(fresh.solcVersion);
    expect(artifact.abi).toEqual(expected.abi);
    expect(artifact.bytecode).toBe(expected.bytecode);
    expect(artifact.deployedBytecode).toBe(expected.deployedBytecode);
  });

  it.each(CONTRACT_NAMES)("%s: src/abis.ts and src/bytecode.ts match a fresh compile", (name) => {
    const key = camelName(name);
    expect((abis as Record<string, unknown>)[`${key}Abi`]).toEqual(fresh.artifacts[name].abi);
    expect((bytecode as Record<string, unknown>)[`${key}Bytecode`]).toBe(fresh.artifacts[name].bytecode);
    expect((bytecode as Record<string, unknown>)[`${key}DeployedBytecode`]).toBe(
      fresh.artifacts[name].deployedBytecode,
    );
    expect(bytecode.CONTRACTS_SOURCE_HASH).toBe(fresh.sourceHash);
  });

  it("compiles without warnings", () => {
    expect(fresh.warnings).toEqual([]);
  });
});

describe("contract surfaces", () => {
  it("code placed with hardhat_setCode has no immutables", () => {
    for (const name of [
      "B20Factory",
      "B20Token",
      "B20StablecoinToken",
      "Multicall3",
      "BatchSettlement",
      "Erc3009DepositCollector",
      "Permit2",
      "X402UptoPermit2Proxy",
    ] as const) {
      expect(fresh.artifacts[name].immutableReferences, name).toEqual({});
    }
  });

  it("AgentCollection implements ERC-7496 with interface id 0xaf332f3e", () => {
    const fns = signatures("AgentCollection", "function");
    const erc7496 = [
      "getTraitValue(uint256,bytes32)",
      "getTraitValues(uint256,bytes32[])",
      "getTraitMetadataURI()",
      "setTrait(uint256,bytes32,bytes32)",
    ];
    for (const fn of erc7496) expect(fns).toContain(fn);
    const id = erc7496.map((fn) => Number.parseInt(toFunctionSelector(fn).slice(2), 16)).reduce((a, b) => a ^ b, 0);
    expect(`0x${(id >>> 0).toString(16).padStart(8, "0")}`).toBe(ERC7496_INTERFACE_ID);

    const events = signatures("AgentCollection", "event");
    for (const ev of [
      "TraitUpdated(bytes32,uint256,bytes32)",
      "TraitUpdatedRange(bytes32,uint256,uint256)",
      "TraitUpdatedRangeUniformValue(bytes32,uint256,uint256,bytes32)",
      "TraitUpdatedList(bytes32,uint256[])",
      "TraitUpdatedListUniformValue(bytes32,uint256[],bytes32)",
      "TraitMetadataURIUpdated()",
      "Revealed(uint256)",
    ]) {
      expect(events).toContain(ev);
    }
    for (const fn of [
      "mintBatch(address[],uint256)",
      "mintRange(address,uint256,uint256)",
      "reveal(uint256[],uint256[],uint8[])",
      "revealed(uint256)",
      "traitsOf(uint256)",
      "traitTypes()",
      "traitLabels(uint8)",
      "setTraitForTokens(uint256[],bytes32,bytes32)",
      "tokenDataRange(uint256,uint256)",
      "ownersRange(uint256,uint256)",
      "tokenURI(uint256)",
    ]) {
      expect(fns).toContain(fn);
    }
  });

  it("IdentityRegistry has the ERC-8004 identity surface", () => {
    const fns = signatures("IdentityRegistry", "function");
    for (const fn of [
      "register()",
      "register(string)",
      "register(string,(string,bytes)[])",
      "setAgentURI(uint256,string)",
      "getMetadata(uint256,string)",
      "setMetadata(uint256,string,bytes)",
      "getAgentWallet(uint256)",
      "setAgentWallet(uint256,address,uint256,bytes)",
      "unsetAgentWallet(uint256)",
      "registerBatch(address[])",
    ]) {
      expect(fns).toContain(fn);
    }
    const events = signatures("IdentityRegistry", "event");
    for (const ev of [
      "Registered(uint256,string,address)",
      "MetadataSet(uint256,string,string,bytes)",
      "URIUpdated(uint256,string,address)",
    ]) {
      expect(events).toContain(ev);
    }
  });

  it("AgentBindings has the ERC-8217 surface", () => {
    expect(signatures("AgentBindings", "function")).toContain("bindingOf(uint256)");
    expect(signatures("AgentBindings", "event")).toContain("AgentBound(uint256,uint8,address,uint256,address)");
    const bindingOf = abiOf("AgentBindings").find((i) => i.type === "function" && i.name === "bindingOf");
    expect(bindingOf && "outputs" in bindingOf ? bindingOf.outputs[0] : undefined).toMatchObject({
      type: "tuple",
      internalType: "struct IERCAgentBindings.Binding",
    });
  });

  it("UsdToken has the EIP-3009 surface USDC and the x402 facilitator use", () => {
    const fns = signatures("UsdToken", "function");
    for (const fn of [
      "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
      "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
      "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
      "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
      "cancelAuthorization(address,bytes32,uint8,bytes32,bytes32)",
      "authorizationState(address,bytes32)",
      "DOMAIN_SEPARATOR()",
      "eip712Domain()",
      "version()",
      "name()",
      "decimals()",
      "mint(address,uint256)",
    ]) {
      expect(fns).toContain(fn);
    }
    expect(signatures("UsdToken", "event")).toContain("AuthorizationUsed(address,bytes32)");
  });

  it("B20Factory emits B20Created with the documented signature", () => {
    const created = abiOf("B20Factory").find((i) => i.type === "event" && i.name === "B20Created");
    expect(created).toBeDefined();
    if (created?.type !== "event") throw new Error("unreachable");
    expect(toEventSelector(created)).toBe(B20_CREATED_TOPIC);
    expect(created.inputs.map((i) => [i.name, i.type, i.indexed ?? false])).toEqual([
      ["token", "address", true],
      ["variant", "uint8", true],
      ["name", "string", false],
      ["symbol", "string", false],
      ["decimals", "uint8", false],
      ["variantEventParams", "bytes", false],
    ]);
    expect(signatures("B20Factory", "function").sort()).toEqual([
      "createB20(uint8,bytes32,bytes,bytes[])",
      "getB20Address(uint8,address,bytes32)",
      "isB20(address)",
      "isB20Initialized(address)",
    ]);
    expect(signatures("B20Token", "function")).not.toContain("currency()");
    expect(signatures("B20StablecoinToken", "function")).toContain("currency()");
    for (const token of ["B20Token", "B20StablecoinToken"] as const) {
      expect(signatures(token, "function")).not.toContain("initialized()");
      expect(signatures(token, "function")).not.toContain("variant()");
    }
  });

  it("Multicall3 exposes aggregate3", () => {
    expect(signatures("Multicall3", "function")).toContain("aggregate3((address,bool,bytes)[])");
  });
});
