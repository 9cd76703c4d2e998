/**
 * A `batch-settlement` payment's payload, read strictly: a deposit (a token authorization and the first voucher), a
 * voucher (the next cumulative ceiling), or a refund (a zero-charge voucher and, for a partial one, its amount). The
 * shapes are x402's EVM binding's ("Client: Payment Construction"); anything else is refused before a chain is read.
 */
import { type Address, getAddress, type Hex } from "viem";
import { z } from "zod";
import type { ChannelConfig } from "./channel-typed-data.js";

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .transform((value) => getAddress(value) as Address);
const bytes32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/)
  .transform((value) => value.toLowerCase() as Hex);
const signature = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2})+$/)
  .transform((value) => value as Hex);
/** A uint128 as a decimal string. */
const amount = z
  .string()
  .regex(/^\d{1,39}$/)
  .transform((value) => BigInt(value))
  .refine((value) => value < 2n ** 128n, "above uint128");

const channelConfig = z.object({
  payer: address,
  payerAuthorizer: address,
  receiver: address,
  receiverAuthorizer: address,
  token: address,
  withdrawDelay: z
    .number()
    .int()
    .min(0)
    .max(2 ** 40 - 1),
  salt: bytes32,
}) satisfies z.ZodType<ChannelConfig, unknown>;

const voucher = z.object({ channelId: bytes32, maxClaimableAmount: amount, signature });

const depositPayload = z.object({
  type: z.literal("deposit"),
  channelConfig,
  voucher,
  deposit: z.object({
    amount: amount.refine((value) => value > 0n, "a deposit is positive"),
    authorization: z.record(z.string(), z.unknown()),
  }),
});

const voucherPayload = z.object({ type: z.literal("voucher"), channelConfig, voucher });

const refundPayload = z.object({
  type: z.literal("refund"),
  channelConfig,
  voucher,
  amount: amount.refine((value) => value > 0n, "a refund is positive").optional(),
});

const channelPayload = z.discriminatedUnion("type", [depositPayload, voucherPayload, refundPayload]);

/** A channel payment's payload, its amounts as bigints and its addresses checksummed. */
export type ChannelPayload = z.infer<typeof channelPayload>;

/** The payload read, or undefined when it is not one of the scheme's three shapes. */
export function readChannelPayload(payload: unknown): ChannelPayload | undefined {
  const parsed = channelPayload.safeParse(payload);
  return parsed.success ? parsed.data : undefined;
}
