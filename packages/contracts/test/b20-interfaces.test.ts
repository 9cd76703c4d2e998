// The devnet's B20 contracts against the interfaces Base publishes. The published signatures are vendored as
// data in `published/base-std-b20.json` (source repository and commit named inside), so this test compares with
// Base's definition, not with our own reading of it.
import { readFileSync } from "node:fs";
import {
  type Abi,
  decodeEventLog,
  encodeAbiParameters,
  encodeEventTopics,
  type Hex,
  parseAbiItem,
  parseAbiParameters,
  toEventSelector,
  toFunctionSelector,
} from "viem";
import { formatAbiItem } from "viem/utils";
import { describe, expect, it } from "vitest";
import { b20FactoryAbi, b20StablecoinTokenAbi, b20TokenAbi } from "../src/abis.js";
import {
  B20_CREATED_TOPIC,
  B20_VARIANTS,
  b20TokenAddress,
  decodeStablecoinEventParams,
  encodeAssetCreateParams,
  encodeStablecoinCreateParams,
  encodeStablecoinEventParams,
} from "../src/index.js";

interface PublishedInterface {
  functions: string[];
  events?: string[];
  eventDeclarations?: Record<string, string>;
  errors?: string[];
  structs?: Record<string, string>;
  enums?: Record<string, string[]>;
}

const published = JSON.parse(readFileSync(new URL("./published/base-std-b20.json", import.meta.url), "utf8")) as {
  source: { repository: string; commit: string };
  IB20Factory: PublishedInterface;
  IB20: PublishedInterface;
  IB20Stablecoin: PublishedInterface;
};

/** Members the devnet needs and Base does not have; each is explained in the contract that declares it. */
const DEVNET_ONLY = new Set([
  // B20Token: the factory sets a token's identity with it (a precompile does so natively).
  "function bootstrap(string,string,uint8,string,address)",
  "error BootstrapRefused()",
  // B20Factory: `createB20` called before the token's code was placed at its address.
  "error TokenCodeMissing(address)",
]);

type Kind = "function" | "event" | "error";

/** `kind name(types)` of every function, event and error of an ABI. */
function members(abi: Abi): string[] {
  return abi
    .filter((item) => item.type === "function" || item.type === "event" || item.type === "error")
    .map((item) => `${item.type} ${formatAbiItem(item as never)}`);
}

function publishedMembers(...interfaces: PublishedInterface[]): string[] {
  const out: string[] = [];
  for (const i of interfaces) {
    for (const kind of ["function", "event", "error"] as const) {
      const list = kind === "function" ? i.functions : kind === "event" ? i.events : i.errors;
      for (const signature of list ?? []) out.push(`${kind} ${signature}`);
    }
  }
  return out;
}

/** The 4-byte selector (functions, errors) or 32-byte topic (events) of `kind signature`. */
function selectorOf(member: string): Hex {
  const [kind, signature] = member.split(" ", 2) as [Kind, string];
  return kind === "event" ? toEventSelector(signature) : toFunctionSelector(signature);
}

const factory = members(b20FactoryAbi as Abi);
const assetToken = members(b20TokenAbi as Abi);
const stablecoinToken = members(b20StablecoinTokenAbi as Abi);
const publishedFactory = publishedMembers(published.IB20Factory);
const publishedToken = publishedMembers(published.IB20);
const publishedStablecoin = publishedMembers(published.IB20, published.IB20Stablecoin);

describe(`B20 ABIs against ${published.source.repository}@${published.source.commit.slice(0, 7)}`, () => {
  it("the factory has every published IB20Factory function, event and error, with the same selectors", () => {
    const ours = new Map(factory.map((m) => [m, selectorOf(m)]));
    for (const member of publishedFactory) {
      expect(ours.get(member), member).toBe(selectorOf(member));
    }
  });

  it.each([
    ["factory", factory, publishedFactory],
    ["asset token", assetToken, publishedToken],
    ["stablecoin token", stablecoinToken, publishedStablecoin],
  ])("every member of the %s is published, or named devnet-only", (_name, ours, theirs) => {
    const publishedSelectors = new Set(theirs.map(selectorOf));
    const unpublished = ours.filter((m) => !publishedSelectors.has(selectorOf(m)) && !DEVNET_ONLY.has(m));
    expect(unpublished).toEqual([]);
  });

  it("B20Created's topic is the published event's, and its indexed fields are token and variant", () => {
    const [signature] = published.IB20Factory.events ?? [];
    expect(signature).toBeDefined();
    expect(B20_CREATED_TOPIC).toBe(toEventSelector(signature as string));
    const created = b20FactoryAbi.find((item) => item.type === "event" && item.name === "B20Created");
    if (created?.type !== "event") throw new Error("B20Created missing from the factory ABI");
    expect(created.inputs.filter((i) => i.indexed).map((i) => i.name)).toEqual(["token", "variant"]);
  });

  it("currency() is on the stablecoin variant only, as IB20Stablecoin declares", () => {
    const currency = "function currency()";
    expect(publishedToken).not.toContain(currency);
    expect(published.IB20Stablecoin.functions).toEqual(["currency()"]);
    expect(assetToken).not.toContain(currency);
    expect(stablecoinToken).toContain(currency);
  });

  it("neither token has initialized() or variant(): IB20 has neither", () => {
    for (const name of ["function initialized()", "function variant()"]) {
      expect(publishedStablecoin).not.toContain(name);
      expect(assetToken).not.toContain(name);
      expect(stablecoinToken).not.toContain(name);
    }
  });

  it("the variant numbers follow the published B20Variant enum", () => {
    expect(published.IB20Factory.enums?.B20Variant).toEqual(Object.keys(B20_VARIANTS));
    expect(Object.values(B20_VARIANTS)).toEqual([0, 1]);
  });
});

describe("B20 structs as published", () => {
  const struct = (name: string) => {
    const fields = published.IB20Factory.structs?.[name];
    if (!fields) throw new Error(`struct ${name} missing from the published data`);
    return parseAbiParameters(`(${fields})`);
  };

  it("decodes a stablecoin's variantEventParams encoded from the published B20StablecoinEventParams", () => {
    const params = encodeAbiParameters(struct("B20StablecoinEventParams"), [{ version: 1, currency: "USD" }] as never);
    expect(decodeStablecoinEventParams(params)).toBe("USD");
    expect(encodeStablecoinEventParams("EUR")).toBe(
      encodeAbiParameters(struct("B20StablecoinEventParams"), [{ version: 1, currency: "EUR" }] as never),
    );
  });

  it("refuses what is not a version-1 B20StablecoinEventParams", () => {
    expect(
      decodeStablecoinEventParams(
        encodeAbiParameters(struct("B20StablecoinEventParams"), [{ version: 2, currency: "USD" }] as never),
      ),
    ).toBeUndefined();
    expect(decodeStablecoinEventParams("0x")).toBeUndefined();
    // The shape the factory does not emit: a bare abi.encode(string).
    expect(decodeStablecoinEventParams(encodeAbiParameters(parseAbiParameters("string"), ["USD"]))).toBeUndefined();
  });

  it("decodes a whole B20Created log of a stablecoin, as Base emits it", () => {
    const event = parseAbiItem(published.IB20Factory.eventDeclarations?.B20Created ?? "");
    if (event.type !== "event") throw new Error("B20Created declaration missing");
    expect(toEventSelector(event)).toBe(toEventSelector((published.IB20Factory.events ?? [])[0] ?? ""));
    const token = b20TokenAddress(B20_VARIANTS.STABLECOIN, 1);
    const topics = encodeEventTopics({ abi: [event], args: [token, 1] as never });
    expect(topics[0]).toBe(B20_CREATED_TOPIC);
    const variantEventParams = encodeAbiParameters(struct("B20StablecoinEventParams"), [
      { version: 1, currency: "USD" },
    ] as never);
    const data = encodeAbiParameters(parseAbiParameters("string, string, uint8, bytes"), [
      "Base USD",
      "bUSD",
      6,
      variantEventParams,
    ]);
    const log = decodeEventLog({ abi: b20FactoryAbi, topics: topics as [Hex, ...Hex[]], data });
    expect(log.eventName).toBe("B20Created");
    const { args } = log as Extract<typeof log, { eventName: "B20Created" }>;
    expect([args.token, args.variant, args.name, args.symbol, args.decimals]).toEqual([
      token,
      1,
      "Base USD",
      "bUSD",
      6,
    ]);
    const params = args.variantEventParams;
    expect(decodeStablecoinEventParams(params)).toBe("USD");
  });

  it("encodes createB20 params as the published create structs", () => {
    const admin = "0x00000000000000000000000000000000000000Ad";
    expect(encodeStablecoinCreateParams({ name: "N", symbol: "S", initialAdmin: admin, currency: "USD" })).toBe(
      encodeAbiParameters(struct("B20StablecoinCreateParams"), [
        { version: 1, name: "N", symbol: "S", initialAdmin: admin, currency: "USD" },
      ] as never),
    );
    expect(encodeAssetCreateParams({ name: "N", symbol: "S", initialAdmin: admin, decimals: 18 })).toBe(
      encodeAbiParameters(struct("B20AssetCreateParams"), [
        { version: 1, name: "N", symbol: "S", initialAdmin: admin, decimals: 18 },
      ] as never),
    );
  });
});
