import type { CreateConsoleLinkReturnType } from "@agent-tools/sdk/contracts";
import type { Style } from "./render.js";

/**
 * `agent-tools console`: whom the link signs in, that it works once and for how long, then the link alone on its
 * line (docs/decisions.md, "The operator console").
 */
export function renderConsoleLink(link: CreateConsoleLinkReturnType, style: Style, now = Date.now()): string {
  const minutes = Math.max(1, Math.round((Date.parse(link.expiresAt) - now) / 60_000));
  const until = `${link.expiresAt.slice(0, 10)} ${link.expiresAt.slice(11, 19)} UTC`;
  return (
    `Operator console sign-in for ${link.address}: open the link below in a browser.\n` +
    `${style.bold(`It works once, within ${minutes} minute${minutes === 1 ? "" : "s"}`)} (until ${until}). ` +
    "Until then it signs anyone in: keep it to yourself.\n\n" +
    `${link.url}\n`
  );
}
