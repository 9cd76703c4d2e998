import { describe, expect, it } from "vitest";
import { siwxChallenge, siwxChallengeChains } from "../src/sign-in.js";

const OPERATOR_CHALLENGE = 'SIWX realm="agent-tools operator", chains="eip155:31337 eip155:31338"';

describe("siwxChallengeChains", () => {
  it("reads the EVM chains of a SIWX challenge", () => {
    expect(siwxChallengeChains(OPERATOR_CHALLENGE)).toEqual(["eip155:31337", "eip155:31338"]);
    expect(siwxChallengeChains('SIWX chains="solana:abc eip155:8453"')).toEqual(["eip155:8453"]);
    expect(siwxChallengeChains('Bearer realm="x", chains="eip155:1"')).toEqual([]);
    expect(siwxChallengeChains(null)).toEqual([]);
  });

  it("reads back the chains of the challenge the service writes", () => {
    expect(siwxChallenge("agent-tools operator", ["eip155:31337", "eip155:31338"])).toBe(OPERATOR_CHALLENGE);
  });
});
