/**
 * The devnet's fixed facts (accounts, addresses, the B20 schedule) without its runtime: what a simulator or a
 * parent process needs of the devnet without loading Hardhat (`@agent-tools/devnet/facts`).
 */
export {
  B20_BLOCK_SECONDS,
  B20_SCHEDULE,
  B20_SCHEDULE_TIP,
  B20_WINDOWS,
  type B20ScheduledToken,
  type B20ScheduleEntry,
  b20ScheduleCountWithin,
} from "./b20-schedule.js";
export * from "./constants.js";
