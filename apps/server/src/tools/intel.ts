import type { RarityTable, RarityTierName } from "@agent-tools/contracts";
import { type Clearance, clearanceMeets, clearances, type ToolName, toolNames, toolRoutes } from "@agent-tools/schema";
import { agentName, EDITION } from "../agents/agent-records.js";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { countWork } from "../metering/work-meter.js";
import type { Tool } from "./types.js";
import { listOf } from "./wording.js";

/* ----------------------------------------------------------------------------------------------------------- */
/*                                    Trait census of the revealed collection                                   */
/* ----------------------------------------------------------------------------------------------------------- */

/** How many revealed agents carry each trait value: trait name -> label -> holders. */
interface TraitCensus {
  revealed: number;
  holders: Map<string, Map<string, number>>;
}

/**
 * One census per rarity table: the index builds a new table whenever a reveal changes the traits, and traits
 * change only on reveal, so a table's census stays right for as long as the table is in use.
 */
const censusByTable = new WeakMap<RarityTable, TraitCensus>();

function takeCensus(collection: CollectionIndex, table: RarityTable): TraitCensus {
  const holders = new Map<string, Map<string, number>>();
  let revealed = 0;
  for (const entry of table.entries) {
    if (entry.score === null) continue;
    const token = collection.token(entry.tokenId);
    if (!token?.revealed) continue;
    revealed++;
    for (const [trait, label] of Object.entries(token.traits)) {
      const byLabel = holders.get(trait) ?? new Map<string, number>();
      byLabel.set(label, (byLabel.get(label) ?? 0) + 1);
      holders.set(trait, byLabel);
    }
  }
  return { revealed, holders };
}

function traitCensus(collection: CollectionIndex): TraitCensus {
  const table = collection.rarityTable();
  let census = censusByTable.get(table);
  if (!census) {
    census = takeCensus(collection, table);
    censusByTable.set(table, census);
  }
  return census;
}

interface RarestTrait {
  trait: string;
  label: string;
  holders: number;
}

/** The token's trait value held by the fewest revealed agents (the first such trait on a tie). */
function rarestTrait(traits: Record<string, string>, census: TraitCensus): RarestTrait | undefined {
  let rarest: RarestTrait | undefined;
  for (const [trait, label] of Object.entries(traits)) {
    const holders = census.holders.get(trait)?.get(label) ?? 0;
    if (holders > 0 && (!rarest || holders < rarest.holders)) rarest = { trait, label, holders };
  }
  return rarest;
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                     Which tools a trait points the agent to                                  */
/* ----------------------------------------------------------------------------------------------------------- */

/** A tool a trait value points to, and what the agent should watch with it. */
interface Lead {
  tool: ToolName;
  watch: string;
}

/** Trait name -> label -> lead. Only Mission, Class and Signal steer the mission brief, in that order. */
const leadsByTrait: Record<string, Record<string, Lead>> = {
  Mission: {
    Recon: { tool: "dropRadar", watch: "active and upcoming drops" },
    Liquidity: { tool: "b20Radar", watch: "new B20 tokens' liquidity and 24h volume" },
    "Mint Watch": { tool: "allowlistScan", watch: "which live and upcoming mints the wallet is eligible for" },
    Arbitrage: { tool: "offerRadar", watch: "collection bids at or above floor" },
    Escort: { tool: "portfolio", watch: "the wallet's holdings and the offers they receive" },
    Audit: { tool: "b20Radar", watch: "B20 tokens' supply, variant and risk flags" },
    Diplomacy: { tool: "offerRadar", watch: "floors, best listings and standing collection offers" },
    "Deep Cover": { tool: "altchainRadar", watch: "the second chain's most active tokens" },
  },
  Class: {
    Scout: { tool: "dropRadar", watch: "mint stages as they open" },
    Cartographer: { tool: "altchainRadar", watch: "volume and liquidity on the second chain" },
    Courier: { tool: "allowlistScan", watch: "mint eligibility across active drops" },
    Analyst: { tool: "portfolio", watch: "the wallet's estimated value and received offers" },
    Broker: { tool: "offerRadar", watch: "best listings against collection offers" },
    Sentinel: { tool: "b20Radar", watch: "risk flags on newly deployed B20 tokens" },
    Oracle: { tool: "altchainRadar", watch: "24h volume leaders and price action on the second chain" },
    Archivist: { tool: "portfolio", watch: "the wallet's NFT holdings" },
  },
  Signal: {
    "Low-band": { tool: "dropRadar", watch: "the upcoming-drop feed" },
    "Mid-band": { tool: "b20Radar", watch: "B20 deployments of the past week" },
    "High-band": { tool: "altchainRadar", watch: "sharp 24h moves on the second chain" },
    Encrypted: { tool: "allowlistScan", watch: "gated allowlist mints" },
    Quantum: { tool: "offerRadar", watch: "bids placed above floor" },
    Silent: { tool: "portfolio", watch: "offers arriving on the wallet's holdings" },
  },
};

/** What each tool covers, for tools recommended without a trait behind them. */
const toolCoverage: Record<ToolName, string> = {
  intel: "this profile",
  dropRadar: "active and upcoming NFT drops",
  b20Radar: "newly deployed B20 tokens",
  portfolio: "the wallet's holdings and offers",
  allowlistScan: "mint eligibility on live and upcoming drops",
  altchainRadar: "the second chain's most active tokens",
  offerRadar: "collection floors and offers",
};

/** A tool the agent's traits point to, with the traits that point there ("Arbitrage mission"). */
interface Recommendation extends Lead {
  sources: string[];
}

/** The token's leads, Mission first, one recommendation per tool (traits pointing to the same tool merge). */
function recommendations(traits: Record<string, string>): Recommendation[] {
  const byTool = new Map<ToolName, Recommendation>();
  for (const [trait, leads] of Object.entries(leadsByTrait)) {
    const label = traits[trait];
    const lead = label === undefined ? undefined : leads[label];
    if (!lead) continue;
    const source = `${label} ${trait.toLowerCase()}`;
    const known = byTool.get(lead.tool);
    if (known) known.sources.push(source);
    else byTool.set(lead.tool, { ...lead, sources: [source] });
  }
  return [...byTool.values()];
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                  Clearance                                                   */
/* ----------------------------------------------------------------------------------------------------------- */

function requiredClearance(tool: ToolName): Clearance {
  return toolRoutes[tool].minimumClearance;
}

function opens(clearance: Clearance, tool: ToolName): boolean {
  return clearanceMeets(clearance, requiredClearance(tool));
}

/** The tools a clearance opens, lowest requirement first. */
function unlockedTools(clearance: Clearance): ToolName[] {
  const rank = (tool: ToolName) => clearances.indexOf(requiredClearance(tool));
  return toolNames.filter((tool) => opens(clearance, tool)).sort((a, b) => rank(a) - rank(b));
}

/** The clearance above this one, if any. */
function nextClearance(clearance: Clearance): Clearance | undefined {
  return clearances[clearances.indexOf(clearance) + 1];
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Wording                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

function path(tool: ToolName): string {
  return toolRoutes[tool].path;
}

function withArticle(phrase: string): string {
  return `${/^[AEIOU]/i.test(phrase) ? "an" : "a"} ${phrase}`;
}

function revealedAgents(count: number): string {
  return `${count} revealed agent${count === 1 ? "" : "s"}`;
}

/** A share as a percentage: two significant digits under 1%, one decimal under 10%, whole numbers above. */
function percent(part: number, whole: number): string {
  const value = (part / whole) * 100;
  const rounded = value < 1 ? value.toPrecision(2) : value.toFixed(value < 10 ? 1 : 0);
  return `${Number(rounded)}%`;
}

function formatScore(score: number): string {
  return score.toFixed(2);
}

/** Where a rank stands: the top share for the top fifth, "lower half" below the median, else nothing. */
function standing(rank: number, ranked: number): string {
  if (rank / ranked <= 0.2) return ` (top ${percent(rank, ranked)})`;
  if (rank / ranked > 0.5) return " (lower half of the ranking)";
  return "";
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                Brief sentences                                               */
/* ----------------------------------------------------------------------------------------------------------- */

interface Ranking {
  tier: RarityTierName;
  score: number;
  rank: number;
  ranked: number;
}

/** "Agent #3 is a Legendary Oracle with a Void core: rarity score 31.22, rank 1 of 100 revealed agents (top 1%)." */
function profileSentence(token: IndexedToken, ranking: Ranking): string {
  const { Class: agentClass, Core: core } = token.traits;
  const who = `${ranking.tier} ${agentClass ?? "agent"}${core ? ` with ${withArticle(core)} core` : ""}`;
  return (
    `${agentName(token.tokenId)} is ${withArticle(who)}: rarity score ${formatScore(ranking.score)}, ` +
    `rank ${ranking.rank} of ${revealedAgents(ranking.ranked)}${standing(ranking.rank, ranking.ranked)}.`
  );
}

/** Signal analysis: the rarest trait and how many revealed agents share it. */
function rarestTraitSentence(rarest: RarestTrait, revealed: number): string {
  const trait = `${rarest.label} (${rarest.trait})`;
  const share = `${rarest.holders} of ${revealedAgents(revealed)}, ${percent(rarest.holders, revealed)}`;
  if (rarest.holders === 1) return `Its rarest trait is ${trait}, which no other revealed agent carries (${share}).`;
  if (rarest.holders / revealed >= 0.15) {
    return `Even its rarest trait, ${trait}, is shared by ${share}: a profile that blends into the crowd.`;
  }
  return `Its rarest trait is ${trait}, shared by ${share}.`;
}

/** "its Recon mission and Scout class point to active and upcoming drops (/drop-radar)" */
function leadPhrase(recommendation: Recommendation): string {
  const verb = recommendation.sources.length === 1 ? "points" : "point";
  return `its ${listOf(recommendation.sources)} ${verb} to ${recommendation.watch} (${path(recommendation.tool)})`;
}

/** "/drop-radar for active and upcoming NFT drops" */
function coveragePhrase(tool: ToolName): string {
  return `${path(tool)} for ${toolCoverage[tool]}`;
}

/** Mission brief: what the traits say to watch, with the tools the clearance opens. */
function missionSentence(usable: Recommendation[], clearance: Clearance): string {
  if (usable.length > 0) return `Mission brief: ${listOf(usable.slice(0, 2).map(leadPhrase))}.`;
  const fallback = unlockedTools(clearance).filter((tool) => tool !== "intel");
  return `Mission brief: until its clearance rises, work ${listOf(fallback.map(coveragePhrase))}.`;
}

/** The clearance the token holds, the tools it opens, and what a higher clearance would add. */
function clearanceSentence(clearance: Clearance, locked: Recommendation[]): string {
  const opened = listOf(unlockedTools(clearance).map(path));
  const next = nextClearance(clearance);
  if (!next) return `${clearance} clearance opens every tool: ${opened}.`;
  const lead = locked[0];
  if (lead) {
    const verb = lead.sources.length === 1 ? "points" : "point";
    const pointer = `where its ${listOf(lead.sources)} ${verb}`;
    return `${clearance} clearance opens ${opened}; ${path(lead.tool)}, ${pointer}, needs ${requiredClearance(lead.tool)} clearance.`;
  }
  const added = toolNames.filter((tool) => requiredClearance(tool) === next).map(path);
  return `${clearance} clearance opens ${opened}; ${next} clearance would add ${listOf(added)}.`;
}

function revealedBrief(token: IndexedToken, ranking: Ranking, census: TraitCensus): string {
  const leads = recommendations(token.traits);
  const usable = leads.filter((lead) => opens(token.clearance, lead.tool));
  const locked = leads.filter((lead) => !opens(token.clearance, lead.tool));
  const rarest = rarestTrait(token.traits, census);
  return [
    profileSentence(token, ranking),
    rarest ? rarestTraitSentence(rarest, census.revealed) : undefined,
    missionSentence(usable, token.clearance),
    clearanceSentence(token.clearance, locked),
  ]
    .filter((sentence) => sentence !== undefined)
    .join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                     Tool                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

/** The token's rarity when it is revealed and ranked. */
function rankingOf(token: IndexedToken, table: RarityTable): Ranking | undefined {
  const { tier, score, rank } = token.rarity;
  if (!token.revealed || score === null || rank === null) return undefined;
  return { tier, score, rank, ranked: table.ranked };
}

/** POST /intel: the agent's profile, signal analysis and mission brief, from its traits and rarity. */
export const intelTool: Tool<"intel"> = async (params, context) => {
  const { token, collection } = context;
  const ranking = rankingOf(token, collection.rarityTable());
  // The route is for revealed agents and refuses others before any price is asked; this holds for any caller that
  // runs the tool directly (docs/decisions.md, "Only answers are paid").
  if (!ranking) {
    throw new ServiceError(
      "agent_not_revealed",
      uncharged(
        `${agentName(params.tokenId)} is not revealed yet: its traits, rarity tier, score and rank are set at reveal.`,
      ),
      [{ field: "tokenId", message: "not revealed yet" }],
      {},
      403,
    );
  }
  const census = traitCensus(collection);
  // One agent, ranked against the collection's snapshot: no upstream read.
  countWork("itemsExamined");
  return {
    tokenId: params.tokenId,
    name: agentName(params.tokenId),
    rarity_tier: ranking.tier,
    rarity_score: ranking.score,
    edition: EDITION,
    traits: { ...token.traits },
    brief: revealedBrief(token, ranking, census),
    ...(context.caller ? { caller: context.caller } : {}),
  };
};
