/**
 * The paid tools as A2A skills, through `@a2a-js/sdk`'s own client (A2A 1.0, JSON-RPC), paid with x402's own client.
 * The payment's metadata is read and written with the names x402's A2A extension gives them (`x402.payment.*`, as
 * its reference implementation `a2a-x402` declares them), and its `PaymentRequired` checked with x402's schema, not
 * with the service's constants.
 */

import { type Message, SendMessageRequest, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import { ledgerReportSchema } from "@agent-tools/schema";
import { PaymentRequiredV2Schema } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createA2aTaskStore } from "../src/store/a2a-tasks.js";
import { type PaidTestServer, PUBLIC_URL, startPaidTestServer } from "./helpers/paid-server.js";
import { rawPost } from "./helpers/raw-post.js";

const X402_EXTENSION = "https://github.com/google-a2a/a2a-x402/v0.1";
const STATUS = "x402.payment.status";
const REQUIRED = "x402.payment.required";
const PAYLOAD = "x402.payment.payload";
const RECEIPTS = "x402.payment.receipts";
const ERROR = "x402.payment.error";

let t: PaidTestServer;
let client: Client;
/** What a client that declares x402's extension sends with each call. */
let x402: { serviceParameters: Record<string, string> };

/** A client of the agent whose calls reach `origin` (the card names the public URL, as behind a proxy). */
function clientOf(origin: () => string): Promise<Client> {
  const toServer: typeof fetch = (input, init) =>
    fetch(String(input instanceof Request ? input.url : input).replace(PUBLIC_URL, origin()), init);
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: toServer })] }).createFromUrl(
    origin(),
  );
}

beforeAll(async () => {
  t = await startPaidTestServer();
  client = await clientOf(() => t.server.url);
  x402 = { serviceParameters: ServiceParameters.create(withA2AExtensions(X402_EXTENSION)) };
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** A user message, written in A2A's JSON form. */
function message(fields: { data?: unknown; taskId?: string; metadata?: Record<string, unknown> }) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: fields.data === undefined ? [{ text: "hello" }] : [{ data: fields.data }],
      ...(fields.taskId ? { taskId: fields.taskId } : {}),
      ...(fields.metadata ? { metadata: fields.metadata } : {}),
    },
  });
}

async function send(fields: Parameters<typeof message>[0], through: Client = client): Promise<Task> {
  const result = await through.sendMessage(message(fields), x402);
  expect(result, "the agent answers with a task").toHaveProperty("status");
  return result as Task;
}

function statusOf(task: Task): { state: TaskState; message: Message; metadata: Record<string, unknown> } {
  const message = task.status!.message!;
  return { state: task.status!.state, message, metadata: message.metadata ?? {} };
}

function dataOf(parts: Message["parts"]): unknown {
  return parts.find((part) => part.content?.$case === "data")?.content?.value;
}

/** The x402 `PaymentRequired` of a task waiting for payment. */
function requiredOf(task: Task): PaymentRequired {
  const { state, metadata } = statusOf(task);
  expect(state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  expect(metadata[STATUS]).toBe("payment-required");
  return PaymentRequiredV2Schema.parse(metadata[REQUIRED]) as PaymentRequired;
}

async function paymentPayload(index: number, paymentRequired: PaymentRequired): Promise<Record<string, unknown>> {
  return JSON.parse(Buffer.from(await t.pay(index, paymentRequired), "base64").toString("utf8"));
}

describe("the A2A agent", () => {
  it("has a card A2A clients read: a skill per paid tool with its prices, x402's extension required", async () => {
    const card = await client.getAgentCard();
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${PUBLIC_URL}/a2a`, protocolBinding: "JSONRPC" });
    expect(card.skills.map((skill) => skill.id)).toEqual(
      expect.arrayContaining(["intel", "drop_radar", "b20_radar", "portfolio", "allowlist_scan", "dispatch"]),
    );
    const intel = card.skills.find((skill) => skill.id === "intel")!;
    expect(intel.description).toMatch(/1\.00 USD a call, 0\.01 USD for any holder/);
    const extension = card.capabilities!.extensions.find((e) => e.uri === X402_EXTENSION);
    expect(extension).toMatchObject({ required: true });
    expect(extension!.params).toMatchObject({
      network: t.config.payment.network,
      asset: t.config.payment.asset,
      payTo: t.config.payment.payTo,
      prices: { intel: { standard: "1000000", discounted: "10000" } },
    });
  });

  it("is listed in the ERC-8004 registration file beside MCP, by its agent card", async () => {
    const registration = (await (await t.get("/.well-known/agents/1.json")).json()) as {
      services: { name: string; endpoint: string }[];
    };
    expect(registration.services).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "MCP" }),
        expect.objectContaining({ name: "A2A", endpoint: `${PUBLIC_URL}/.well-known/agent-card.json` }),
      ]),
    );
  });

  it("tells a client that does not declare x402's extension that it must, and serves it nothing", async () => {
    await expect(client.sendMessage(message({ data: { skill: "intel", input: { tokenId: 4 } } }))).rejects.toThrow(
      /extension/i,
    );
  });

  it("asks for payment, then runs the skill paid by the next message: the payer pays exactly the price", async () => {
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 4 } } });
    const required = requiredOf(waiting);
    expect(required.resource.url).toBe("a2a://skill/intel");
    const payer = t.devnet.deployment.accounts[3]!.address;
    const before = await t.balance(payer);

    const done = await send({
      taskId: waiting.id,
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(3, required) },
    });
    const { state, metadata } = statusOf(done);
    expect(state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(metadata[STATUS]).toBe("payment-completed");
    const [receipt] = metadata[RECEIPTS] as { success: boolean; transaction: string; payer: string }[];
    expect(receipt).toMatchObject({ success: true, payer });
    expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const answer = dataOf(done.artifacts[0]!.parts) as { tokenId: number; brief: string };
    expect(answer).toMatchObject({ tokenId: 4 });
    expect(answer.brief.length).toBeGreaterThan(0);
    expect(before - (await t.balance(payer))).toBe(BigInt(required.accepts[0]!.amount));

    // The operator's ledger books it as an A2A call.
    const path = "/operator/ledger";
    const res = await t.get(path, { "SIGN-IN-WITH-X": await t.signIn(0, path) });
    const report = ledgerReportSchema.parse(await res.json());
    expect(report.entries.find((entry) => entry.transaction === receipt!.transaction)).toMatchObject({
      method: "A2A",
      route: "/intel",
      payer,
    });
  });

  it("refuses a payment used before, on a task of its own too, and charges nothing", async () => {
    const required = requiredOf(await send({ data: { skill: "intel", input: { tokenId: 6 } } }));
    const payload = await paymentPayload(5, required);
    const payer = t.devnet.deployment.accounts[5]!.address;
    const first = await send({
      data: { skill: "intel", input: { tokenId: 6 } },
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: payload },
    });
    expect(statusOf(first).state).toBe(TaskState.TASK_STATE_COMPLETED);
    const after = await t.balance(payer);

    const replayed = await send({
      data: { skill: "intel", input: { tokenId: 6 } },
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: payload },
    });
    const { state, metadata } = statusOf(replayed);
    expect(state).toBe(TaskState.TASK_STATE_FAILED);
    expect(metadata[STATUS]).toBe("payment-failed");
    expect(metadata[ERROR]).toBe("payment_already_used");
    expect(metadata[RECEIPTS]).toEqual([expect.objectContaining({ success: false })]);
    expect(replayed.artifacts).toEqual([]);
    expect(await t.balance(payer)).toBe(after);
  });

  it("gives a holder signed in for /a2a the holder price, and takes that price", async () => {
    // Demo account #1 holds token 1; its Sign-In-With-X travels in the message's metadata, signed for the endpoint.
    const signIn = { "sign-in-with-x": await t.signIn(1, "/a2a") };
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 1 } }, metadata: signIn });
    const required = requiredOf(waiting);
    expect(required.accepts[0]!.amount).toBe("10000");
    const payer = t.devnet.deployment.accounts[1]!.address;
    const before = await t.balance(payer);
    const done = await send({
      taskId: waiting.id,
      metadata: {
        "sign-in-with-x": await t.signIn(1, "/a2a"),
        [STATUS]: "payment-submitted",
        [PAYLOAD]: await paymentPayload(1, required),
      },
    });
    expect(statusOf(done).state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(before - (await t.balance(payer))).toBe(10000n);
  });

  it("rejects an input no payment can make right, naming the field, before asking for payment", async () => {
    const invalid = await send({ data: { skill: "intel", input: { tokenId: 0 } } });
    expect(statusOf(invalid).state).toBe(TaskState.TASK_STATE_REJECTED);
    const body = dataOf(statusOf(invalid).message.parts) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((d) => d.field)).toContain("tokenId");

    const unknown = await send({ data: { skill: "teleport", input: {} } });
    expect(statusOf(unknown).state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(dataOf(statusOf(unknown).message.parts)).toMatchObject({
      error: { code: "unknown_tool", details: [{ field: "skill" }] },
    });

    const prose = await send({});
    expect(statusOf(prose).state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusOf(prose).message.metadata?.[STATUS]).toBeUndefined();
  });

  it("takes the payment for a task on another instance sharing the store: the task was asked for on the first", async () => {
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 7 } } });
    const required = requiredOf(waiting);
    const other = await t.instance(t.payments);
    try {
      const payer = t.devnet.deployment.accounts[7]!.address;
      const before = await t.balance(payer);
      const done = await send(
        {
          taskId: waiting.id,
          metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(7, required) },
        },
        await clientOf(() => other.url),
      );
      expect(statusOf(done).state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(dataOf(done.artifacts[0]!.parts)).toMatchObject({ tokenId: 7 });
      expect(before - (await t.balance(payer))).toBe(BigInt(required.accepts[0]!.amount));
    } finally {
      await other.close();
    }
  });

  it("keeps of an unpaid message a small row, swept after a quarter of an hour; a paid task a day", async () => {
    const padding = "x".repeat(20_000);
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 8 } }, metadata: { note: padding } });
    requiredOf(waiting);
    const [row] = await t.db.query<{ size: number }>(
      "SELECT octet_length(task::text) AS size FROM a2a_tasks WHERE id = $1",
      [waiting.id],
    );
    expect(row!.size).toBeLessThan(1000);

    const store = createA2aTaskStore(t.db);
    const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    const ids = async () => (await t.db.query<{ id: string }>("SELECT id FROM a2a_tasks")).map((r) => r.id);
    const settled = await t.db.query<{ id: string }>("SELECT id FROM a2a_tasks WHERE NOT waiting");
    const paid = settled.map((r) => r.id);
    expect(paid.length).toBeGreaterThan(0);
    await store.sweep(later(14));
    expect(await ids()).toContain(waiting.id);
    await store.sweep(later(16));
    expect(await ids()).not.toContain(waiting.id);
    expect(await ids()).toEqual(expect.arrayContaining(paid));
    await store.sweep(later(24 * 60 + 1));
    expect(await ids()).toEqual([]);
  });

  it.each([
    ["a Host of another site", { host: "evil.example.com" }],
    ["an Origin of another site", { origin: "http://evil.example.com" }],
  ])("refuses a request with %s (DNS rebinding): 403, nothing served", async (_, headers) => {
    const res = await rawPost(`${t.server.url}/a2a`, headers, {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: { messageId: "m1", role: "ROLE_USER", parts: [{ data: { skill: "intel", input: { tokenId: 1 } } }] },
      },
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "forbidden_origin" } });
  });
});
