/** Time as the service sees it; injected so that tests can move it (token expiry, schedules). */
export interface Clock {
  now(): Date;
  /** Resolves once `ms` of this clock's time have passed: a deliberate delay, such as the login slowdown. */
  wait(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
