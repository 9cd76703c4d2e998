/**
 * The operator console in the browser (served at /operator by routes/operator-console.ts, built by
 * tsup.console.config.ts): signs in with the operator's EIP-1193 wallet (Sign-In with Ethereum, one signature opens
 * an hour's session), then draws what `GET /operator/overview` says. No key is typed into the page, no script or
 * font comes from elsewhere.
 */
import type { LedgerEntry, OperatorOverview } from "@agent-tools/schema";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

// The routes the page talks to (packages/schema/src/operator.ts names them; the page carries no schema code).
const SESSION_PATH = "/operator/session";
const OVERVIEW_PATH = "/operator/overview";
const EXPORT_PATH = "/operator/ledger/export";
const STATEMENT = "Sign in as the operator to read the settlement ledger.";

const publicUrl = document.body.dataset.publicUrl ?? location.origin;
const byId = (id: string) => document.getElementById(id) as HTMLElement;
const setStatus = (text: string) => {
  byId("status").textContent = text;
};

/** A text node's worth of HTML, escaped. */
const html = (text: string | number) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const usd = (units: string | number) => (Number(units) / 1e6).toFixed(2);
const short = (hex: string) => `${hex.slice(0, 6)}…${hex.slice(-4)}`;

function utf8Hex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function freshNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function errorOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  return body?.error?.message ?? `The service answered ${res.status}.`;
}

/** Signs in with the wallet: asks which chains the service takes, signs its sign-in message, opens a session. */
async function signIn(): Promise<void> {
  const wallet = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  if (!wallet) {
    setStatus(
      "No wallet in this browser: the console signs in with an Ethereum wallet (EIP-1193). Add one and reload.",
    );
    return;
  }
  setStatus("Waiting for your wallet…");
  const [address] = (await wallet.request({ method: "eth_requestAccounts" })) as string[];
  if (!address) throw new Error("The wallet shared no account.");
  const probe = await fetch(SESSION_PATH, { method: "POST" });
  const chains = /chains="([^"]*)"/.exec(probe.headers.get("www-authenticate") ?? "")?.[1] ?? "";
  const chainId = chains.split(/[\s,]+/).find((chain) => chain.startsWith("eip155:"));
  if (!chainId) throw new Error("The service names no Ethereum chain to sign in on.");
  const url = `${publicUrl}${SESSION_PATH}`;
  const payload = await createSIWxPayload(
    {
      domain: new URL(publicUrl).host,
      uri: url,
      version: "1",
      statement: STATEMENT,
      nonce: freshNonce(),
      issuedAt: new Date().toISOString(),
      chainId,
      type: "eip191",
      resources: [url],
    },
    {
      address: address as `0x${string}`,
      signMessage: async ({ message }: { message: string }) =>
        (await wallet.request({ method: "personal_sign", params: [utf8Hex(message), address] })) as `0x${string}`,
    } as never,
    url,
  );
  const res = await fetch(SESSION_PATH, { method: "POST", headers: { "SIGN-IN-WITH-X": encodeSIWxHeader(payload) } });
  if (!res.ok) {
    setStatus(res.status === 403 ? `${address} is not the operator of this service.` : await errorOf(res));
    return;
  }
  setStatus("");
  await show();
}

/** Bars of one series, as SVG: a label under each (vertical) or before it (horizontal). */
function bars(points: { label: string; value: number }[], horizontal: boolean, name: string): string {
  const max = Math.max(...points.map((p) => p.value), 0.01);
  if (horizontal) {
    const rows = points
      .map((p, i) => {
        const w = (p.value / max) * 220;
        return `<text x="0" y="${i * 22 + 14}">${html(p.label)}</text><rect class="bar" x="110" y="${i * 22 + 3}" width="${w.toFixed(1)}" height="14"><title>${html(p.label)}: $${p.value.toFixed(2)}</title></rect><text x="${(114 + w).toFixed(1)}" y="${i * 22 + 14}">$${p.value.toFixed(2)}</text>`;
      })
      .join("");
    return `<svg data-chart="${name}" viewBox="0 0 380 ${Math.max(points.length * 22, 22)}" role="img">${rows}</svg>`;
  }
  // One column per point, a label under every fifth (and the last), whatever the number of days.
  const step = 12;
  const width = Math.max(points.length * step + 24, 120);
  const cols = points
    .map((p, i) => {
      const h = (p.value / max) * 100;
      const label =
        i % 5 === 0 || i === points.length - 1 ? `<text x="${i * step}" y="126">${html(p.label.slice(5))}</text>` : "";
      return `<rect class="bar" x="${i * step + 2}" y="${(110 - h).toFixed(1)}" width="${step - 4}" height="${h.toFixed(1)}"><title>${html(p.label)}: $${p.value.toFixed(2)}</title></rect>${label}`;
    })
    .join("");
  return `<svg data-chart="${name}" viewBox="0 0 ${width} 130" role="img">${cols}</svg>`;
}

function table(head: string[], rows: string[][], name: string): string {
  return `<div class="scroll"><table data-table="${name}"><thead><tr>${head.map((h) => `<th>${html(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table></div>`;
}

function paymentRow(entry: LedgerEntry, transactionUrl: string | null): string[] {
  const tx = transactionUrl
    ? `<a href="${html(transactionUrl.replace("{hash}", entry.transaction))}" rel="noreferrer" target="_blank">${short(entry.transaction)}</a>`
    : `<span title="${html(entry.transaction)}">${short(entry.transaction)}</span>`;
  return [
    html(entry.settledAt.replace("T", " ").slice(0, 19)),
    html(`${entry.method} ${entry.route}`),
    `<span title="${html(entry.payer)}">${short(entry.payer)}</span>`,
    html(entry.kind === "refund" ? `refund${entry.note ? `: ${entry.note}` : ""}` : entry.pricePoint),
    `${entry.kind === "refund" ? "-" : ""}$${usd(entry.amount)}`,
    `<span data-transaction="${html(entry.transaction)}">${tx}</span>`,
  ];
}

/** What a total kept, in USD, for a bar: net of refunds, and no bar below zero. */
const kept = (total: { netUsd: string }) => Math.max(0, Number(total.netUsd));

/** Every day of the report's window, oldest first, with the USD kept on it (0 on a day without payments). */
function daysOf(report: OperatorOverview["report"]): { label: string; value: number }[] {
  const settled = new Map(report.byDay.map((d) => [d.day, kept(d)]));
  const days: { label: string; value: number }[] = [];
  for (let at = Date.parse(`${report.from}T00:00:00Z`); at <= Date.parse(`${report.to}T00:00:00Z`); at += 86_400_000) {
    const day = new Date(at).toISOString().slice(0, 10);
    days.push({ label: day, value: settled.get(day) ?? 0 });
  }
  return days;
}

function render(overview: OperatorOverview): string {
  const { report, pending, missions, upstreams, refusals, transactionUrl } = overview;
  const window = `from=${report.from}&to=${report.to}`;
  const queued = missions.queued ?? 0;
  return `
<p>${html(report.brief)}</p>
<div class="cards">
  <div class="card">Revenue, ${html(report.from)} to ${html(report.to)}<b data-card="revenue">$${html(report.total.netUsd)}</b>${report.total.refunds > 0 ? `<span>$${html(report.total.usd)} paid, $${usd(report.total.refunded)} refunded</span>` : "net of refunds"}</div>
  <div class="card">Payments<b data-card="payments">${report.total.payments}</b></div>
  <div class="card">Pending claims<b data-card="pending" class="${pending.older > 0 ? "warn" : ""}">${pending.recent + pending.older}</b>${pending.older > 0 ? `<span class="warn">${pending.older} unresolved for over 10 minutes</span>` : "none stuck"}</div>
  <div class="card">Missions queued<b data-card="missions">${queued}</b></div>
</div>
<div class="grid">
  <section><h2>Revenue per day (USD)</h2>${bars(daysOf(report), false, "by-day")}</section>
  <section><h2>Revenue per tool (USD)</h2>${bars(
    report.byRoute.map((r) => ({ label: r.route, value: kept(r) })),
    true,
    "by-route",
  )}</section>
</div>
<h2>Latest payments and refunds</h2>
${table(
  ["settled (UTC)", "call", "payer", "price or refund", "USD", "transaction"],
  report.entries.map((e) => paymentRow(e, transactionUrl)),
  "payments",
)}
<p><a class="button" data-export="csv" href="${EXPORT_PATH}?${window}&format=csv" download>Export CSV</a>
   <a class="button" data-export="jsonl" href="${EXPORT_PATH}?${window}&format=jsonl" download>Export JSON Lines</a></p>
<div class="grid">
  <section><h2>Mission queue</h2>${table(
    ["status", "missions"],
    Object.entries(missions).map(([s, n]) => [html(s), String(n)]),
    "missions",
  )}</section>
  <section><h2>Upstreams</h2>${table(
    ["upstream", "circuit", "budget a minute"],
    upstreams.map((u) => [
      html(u.name),
      u.circuitOpen ? '<span class="warn">open: calls refused</span>' : "closed",
      u.budgetPerMinute === null ? "none" : String(u.budgetPerMinute),
    ]),
    "upstreams",
  )}</section>
  <section><h2>Refusals by reason</h2>${
    refusals === null
      ? "<p>Counted with metrics on (METRICS_PORT).</p>"
      : table(
          ["reason", "since start"],
          Object.entries(refusals).map(([r, n]) => [html(r), String(n)]),
          "refusals",
        )
  }</section>
  <section><h2>Settlement</h2>${table(
    ["", ""],
    [
      ["claims of calls running", String(pending.recent)],
      ["claims unresolved over 10 min", String(pending.older)],
      ["settlements sent, unconfirmed", String(report.unconfirmed)],
      ["network", html(report.network)],
    ],
    "settlement",
  )}</section>
</div>`;
}

/** Shows the console, or the sign-in when there is no session. */
async function show(): Promise<void> {
  const res = await fetch(OVERVIEW_PATH);
  if (res.status === 401) {
    byId("signin").hidden = false;
    byId("console").hidden = true;
    return;
  }
  if (!res.ok) {
    setStatus(await errorOf(res));
    return;
  }
  const overview = (await res.json()) as OperatorOverview;
  byId("signin").hidden = true;
  const main = byId("console");
  main.innerHTML = render(overview);
  main.hidden = false;
  byId("who").innerHTML = `signed in · <button id="signout" type="button">Sign out</button>`;
  byId("signout").addEventListener("click", async () => {
    await fetch(SESSION_PATH, { method: "DELETE" });
    byId("who").textContent = "";
    await show();
  });
  document.body.dataset.ready = "console";
}

byId("connect").addEventListener("click", () => {
  signIn().catch((error: unknown) => setStatus(error instanceof Error ? error.message : String(error)));
});
show()
  .catch((error: unknown) => setStatus(error instanceof Error ? error.message : String(error)))
  .finally(() => {
    document.body.dataset.ready ??= "signin";
  });
