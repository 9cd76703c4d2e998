/**
 * Type tests: what the SDK's types let through is what the service accepts. Checked by the type-checker (`pnpm
 * typecheck` covers test/); the runtime assertions are trivial, the `@ts-expect-error` lines are the test.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { AgentToolsClient, DispatchInput, ListMissionsOutput, ToolOutput, TypedMission } from "../src/index.js";

describe("mission types", () => {
  it("type a mission's params by its tool", () => {
    const ok: DispatchInput = {
      tokenId: 5,
      mission: { tool: "portfolio", params: { walletAddress: "0x1", nftLimit: 5 } },
    };
    // @ts-expect-error a field the portfolio tool does not take
    const wrongField: DispatchInput = { tokenId: 5, mission: { tool: "portfolio", params: { slugs: ["a"] } } };
    // @ts-expect-error a value of the wrong type for the tool's field
    const wrongType: DispatchInput = { tokenId: 5, mission: { tool: "drop-radar", params: { limit: "ten" } } };
    // @ts-expect-error a tool that does not exist
    const noTool: DispatchInput = { tokenId: 5, mission: { tool: "teleport" } };
    expectTypeOf(ok.mission.tool).toEqualTypeOf<TypedMission["tool"]>();
    void [wrongField, wrongType, noTool];
  });

  it("type a listed mission's result by its tool", () => {
    expectTypeOf<ListMissionsOutput["missions"][number]>().toEqualTypeOf<TypedMission>();
    const brief = (mission: TypedMission) => (mission.tool === "intel" ? mission.result?.brief : undefined);
    expectTypeOf(brief).returns.toEqualTypeOf<string | undefined>();
    const drops = (mission: TypedMission) => (mission.tool === "drop-radar" ? mission.result?.drops : undefined);
    expectTypeOf(drops).returns.not.toBeUnknown();
    expectTypeOf<Awaited<ReturnType<AgentToolsClient["dispatch"]>>["data"]["mission"]>().toEqualTypeOf<TypedMission>();
  });
});

describe("always-present fields are required", () => {
  it("a B20 token's market always carries its risk", () => {
    type Market = ToolOutput<"b20Radar">["tokens"][number]["market"];
    type RiskAlwaysThere = undefined extends Market["risk"] ? false : true;
    expectTypeOf<RiskAlwaysThere>().toEqualTypeOf<true>();
    expectTypeOf<Market["risk"]["flags"]>().toEqualTypeOf<string[]>();
  });
});
