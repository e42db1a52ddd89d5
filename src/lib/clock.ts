/** Time as the service sees it; injected so that tests can move it (token expiry, schedules). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
