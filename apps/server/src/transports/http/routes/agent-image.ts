import type { IndexedToken } from "../../../chain/collection-index.js";

const coreColours: Record<string, string> = {
  Copper: "#b87333",
  Graphite: "#4b5563",
  Cobalt: "#2563eb",
  Obsidian: "#1f1b2e",
  Titanium: "#9ca3af",
  Quartz: "#f0abfc",
  Void: "#000000",
};

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small generated portrait of the agent from its traits (a placeholder silhouette while unrevealed). */
export function agentImageSvg(token: IndexedToken): string {
  const core = coreColours[token.traits.Core ?? ""] ?? "#334155";
  const label = token.revealed ? `${token.traits.Class ?? "Agent"} · ${token.rarity.tier}` : "Unrevealed";
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 256 256" role="img" aria-label="Agent #${token.tokenId}">` +
    `<rect width="256" height="256" fill="#0b1020"/>` +
    `<circle cx="128" cy="104" r="56" fill="${core}"/>` +
    `<rect x="84" y="92" width="88" height="18" rx="9" fill="#5eead4" opacity="${token.revealed ? 1 : 0.2}"/>` +
    `<text x="128" y="200" fill="#e2e8f0" font-family="sans-serif" font-size="20" text-anchor="middle">Agent #${token.tokenId}</text>` +
    `<text x="128" y="228" fill="#94a3b8" font-family="sans-serif" font-size="14" text-anchor="middle">${escapeXml(label)}</text>` +
    `</svg>`
  );
}
