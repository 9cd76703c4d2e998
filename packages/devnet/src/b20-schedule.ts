/**
 * The B20 tokens the devnet creates on L2 and the block each is created in: a fixed table, so that a test (or a
 * person trying the B20 radar) can rely on which tokens fall in which window.
 *
 * Base makes a block every 2 seconds: 1,000 blocks are ~33 minutes, 302,400 blocks 7 days, 604,800 blocks 14 days.
 * The seeding mines empty blocks (`hardhat_mine`, 2 seconds apart) between the creations so that L2's tip ends at
 * block {@link B20_SCHEDULE_TIP}, with each token created `ageBlocks` blocks before it.
 */
import { B20_VARIANTS, type B20VariantName, computeB20Address } from "@agent-tools/contracts";
import { type Address, type Hex, numberToHex } from "viem";
import { DEVNET_OPERATOR } from "./constants.js";

/** L2's block number after seeding. */
export const B20_SCHEDULE_TIP = 720_000;
/** Seconds between the empty blocks mined for the schedule (Base's block time). */
export const B20_BLOCK_SECONDS = 2;

/** Block windows the schedule is built around (Base blocks). */
export const B20_WINDOWS = {
  /** ~33 minutes. */
  recent: 1_000,
  /** 7 days. */
  week: 302_400,
  /** 14 days. */
  fortnight: 604_800,
} as const;

export interface B20ScheduleEntry {
  variant: B20VariantName;
  name: string;
  symbol: string;
  /** ISO 4217 code of a stablecoin (in `B20Created`'s `variantEventParams`); absent for assets. */
  currency?: string;
  /** Whole tokens minted at creation. */
  supply: number;
  /** Blocks between the creation block and the seeded tip ({@link B20_SCHEDULE_TIP}). */
  ageBlocks: number;
}

/** Creation order, oldest first. 30 assets (18 decimals) and 10 stablecoins (6 decimals). */
const table: readonly B20ScheduleEntry[] = [
  // Older than 14 days (604,800 blocks).
  { variant: "ASSET", name: "Harbor Finance", symbol: "HARBOR", supply: 1_000_000_000, ageBlocks: 715_000 },
  {
    variant: "STABLECOIN",
    name: "Harbor USD",
    symbol: "HBUSD",
    currency: "USD",
    supply: 50_000_000,
    ageBlocks: 688_000,
  },
  { variant: "ASSET", name: "Onchain Otters", symbol: "OTTER", supply: 420_690_000_000, ageBlocks: 651_000 },
  { variant: "ASSET", name: "Blueprint Protocol", symbol: "BLUE", supply: 100_000_000, ageBlocks: 611_500 },
  // Within 14 days, older than 7 days (302,400 blocks).
  { variant: "ASSET", name: "Relay Network", symbol: "RELAY", supply: 1_000_000_000, ageBlocks: 598_000 },
  {
    variant: "STABLECOIN",
    name: "Harbor Euro",
    symbol: "HBEUR",
    currency: "EUR",
    supply: 20_000_000,
    ageBlocks: 571_200,
  },
  { variant: "ASSET", name: "Agent Fuel", symbol: "FUEL", supply: 10_000_000_000, ageBlocks: 540_000 },
  { variant: "ASSET", name: "Tidal Yield", symbol: "TIDE", supply: 500_000_000, ageBlocks: 512_345 },
  { variant: "ASSET", name: "Canvas Guild", symbol: "CANVAS", supply: 1_000_000_000, ageBlocks: 480_000 },
  {
    variant: "STABLECOIN",
    name: "Relay Dollar",
    symbol: "RUSD",
    currency: "USD",
    supply: 75_000_000,
    ageBlocks: 455_555,
  },
  { variant: "ASSET", name: "Degen Lighthouse", symbol: "LIGHT", supply: 69_000_000_000, ageBlocks: 430_000 },
  { variant: "ASSET", name: "Ferry Swap", symbol: "FERRY", supply: 250_000_000, ageBlocks: 401_000 },
  { variant: "ASSET", name: "Signal Oracle", symbol: "SIGNAL", supply: 1_000_000_000, ageBlocks: 377_777 },
  {
    variant: "STABLECOIN",
    name: "Sterling Relay",
    symbol: "RGBP",
    currency: "GBP",
    supply: 10_000_000,
    ageBlocks: 352_000,
  },
  { variant: "ASSET", name: "Quarry Labs", symbol: "QRY", supply: 800_000_000, ageBlocks: 333_000 },
  { variant: "ASSET", name: "Northwind AI", symbol: "NWIND", supply: 1_000_000_000, ageBlocks: 318_000 },
  { variant: "ASSET", name: "Pixel Pilots", symbol: "PILOT", supply: 8_888_888_888, ageBlocks: 309_999 },
  { variant: "ASSET", name: "Moonwake", symbol: "WAKE", supply: 1_000_000_000, ageBlocks: 303_000 },
  // Within 7 days, older than 1,000 blocks.
  {
    variant: "STABLECOIN",
    name: "Tidal Dollar",
    symbol: "TDUSD",
    currency: "USD",
    supply: 30_000_000,
    ageBlocks: 299_000,
  },
  { variant: "ASSET", name: "Cobalt Compute", symbol: "CBLT", supply: 210_000_000, ageBlocks: 270_000 },
  { variant: "ASSET", name: "Sprout DAO", symbol: "SPROUT", supply: 1_000_000_000, ageBlocks: 241_920 },
  { variant: "ASSET", name: "Kelp Markets", symbol: "KELP", supply: 2_000_000_000, ageBlocks: 210_000 },
  {
    variant: "STABLECOIN",
    name: "Keystone Yen",
    symbol: "KJPY",
    currency: "JPY",
    supply: 5_000_000_000,
    ageBlocks: 180_000,
  },
  { variant: "ASSET", name: "Mooring Credit", symbol: "MOOR", supply: 150_000_000, ageBlocks: 151_200 },
  { variant: "ASSET", name: "Wavelength", symbol: "WAVE", supply: 1_000_000_000, ageBlocks: 120_000 },
  { variant: "ASSET", name: "Driftwood", symbol: "DWOOD", supply: 777_777_777, ageBlocks: 96_000 },
  {
    variant: "STABLECOIN",
    name: "Northwind Euro",
    symbol: "NWEUR",
    currency: "EUR",
    supply: 12_000_000,
    ageBlocks: 72_000,
  },
  { variant: "ASSET", name: "Lantern Agents", symbol: "LNTRN", supply: 1_000_000_000, ageBlocks: 43_200 },
  { variant: "ASSET", name: "Orbit Relay", symbol: "ORBIT", supply: 333_000_000, ageBlocks: 21_600 },
  { variant: "ASSET", name: "Brine Shrimp", symbol: "BRINE", supply: 100_000_000_000, ageBlocks: 10_800 },
  { variant: "STABLECOIN", name: "Alpine Franc", symbol: "ACHF", currency: "CHF", supply: 8_000_000, ageBlocks: 7_200 },
  { variant: "ASSET", name: "Saltmarsh", symbol: "SALT", supply: 1_000_000_000, ageBlocks: 3_600 },
  { variant: "ASSET", name: "Gullwing", symbol: "GULL", supply: 5_000_000_000, ageBlocks: 1_800 },
  { variant: "ASSET", name: "Keystone Index", symbol: "KEY", supply: 21_000_000, ageBlocks: 1_200 },
  // Within the last 1,000 blocks.
  { variant: "ASSET", name: "Fogbank Data", symbol: "FOG", supply: 1_000_000_000, ageBlocks: 900 },
  {
    variant: "STABLECOIN",
    name: "Lion City Dollar",
    symbol: "LSGD",
    currency: "SGD",
    supply: 15_000_000,
    ageBlocks: 600,
  },
  { variant: "ASSET", name: "Tern Protocol", symbol: "TERN", supply: 400_000_000, ageBlocks: 300 },
  { variant: "ASSET", name: "Copperhead", symbol: "CPHD", supply: 1_000_000_000, ageBlocks: 120 },
  { variant: "STABLECOIN", name: "Mooring USD", symbol: "MUSD", currency: "USD", supply: 40_000_000, ageBlocks: 30 },
  { variant: "ASSET", name: "Nautilus Vaults", symbol: "NAUT", supply: 600_000_000, ageBlocks: 5 },
];

export interface B20ScheduledToken extends B20ScheduleEntry {
  /** Position in creation order (0 = oldest). */
  order: number;
  /** The address `createB20(variant, salt, ...)` from the devnet operator derives: `computeB20Address`. */
  address: Address;
  /** The `salt` of its `createB20`: the creation order plus one, as 32 bytes. */
  salt: Hex;
  variantId: number;
  /** 1-based count of this variant's tokens so far. */
  variantIndex: number;
  decimals: number;
  /** Block the token is created in: `B20_SCHEDULE_TIP - ageBlocks`. */
  blockNumber: number;
  /** Account index (1..9) the initial supply is minted to. */
  holderIndex: number;
  /** Initial supply in the token's smallest unit. */
  initialSupply: bigint;
}

function buildSchedule(): readonly B20ScheduledToken[] {
  const perVariant = new Map<string, number>();
  return table.map((entry, order) => {
    const variantIndex = (perVariant.get(entry.variant) ?? 0) + 1;
    perVariant.set(entry.variant, variantIndex);
    const variantId = B20_VARIANTS[entry.variant];
    const decimals = entry.variant === "STABLECOIN" ? 6 : 18;
    const salt = numberToHex(order + 1, { size: 32 });
    return {
      ...entry,
      order,
      address: computeB20Address(variantId, DEVNET_OPERATOR, salt),
      salt,
      variantId,
      variantIndex,
      decimals,
      blockNumber: B20_SCHEDULE_TIP - entry.ageBlocks,
      holderIndex: (order % 9) + 1,
      initialSupply: BigInt(entry.supply) * 10n ** BigInt(decimals),
    };
  });
}

/** The B20 tokens of the devnet in creation order, with their addresses and creation blocks. */
export const B20_SCHEDULE: readonly B20ScheduledToken[] = buildSchedule();

/** Number of scheduled tokens whose age is below `windowBlocks` (created within the last `windowBlocks` blocks). */
export function b20ScheduleCountWithin(windowBlocks: number): number {
  return B20_SCHEDULE.filter((t) => t.ageBlocks < windowBlocks).length;
}
