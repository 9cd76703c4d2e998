/** A clock that runs with the wall clock and can be moved ahead: time a test needs to pass, without waiting for it. */
export interface TestClock {
  now(): number;
  advance(ms: number): void;
}

export function createTestClock(): TestClock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms) {
      offset += ms;
    },
  };
}
