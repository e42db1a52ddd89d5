/** The operations the page runs: only the public schema, nothing private to the page. */

export const LOGIN = `mutation ($input: LoginInput!) {
  login(input: $input) {
    __typename
    ... on Token { token }
    ... on Error { message }
  }
}`;

const ROW = 'messages segments delivered failed replies optOuts';

export const NUMBERS = `query ($from: DateTime, $to: DateTime, $interval: StatsInterval) {
  overview: messageStats(from: $from, to: $to, interval: $interval, groupBy: [STATUS]) {
    ... on MessageStats { from to timezone buckets { start ${ROW} queued sent scheduled } totals { ${ROW} } }
    ... on Error { message }
  }
  byCountry: messageStats(from: $from, to: $to, groupBy: [COUNTRY]) {
    ... on MessageStats { totals { country ${ROW} } }
  }
  byCarrier: messageStats(from: $from, to: $to, groupBy: [CARRIER]) {
    ... on MessageStats { totals { carrier ${ROW} } }
  }
  times: deliveryTimes(from: $from, to: $to) {
    ... on DeliveryTimes { delivered p50 p90 p99 }
  }
  campaigns(perPage: 10) {
    ... on CampaignPage { nodes { id name status stats { contacts waiting queued sent delivered failed } } }
  }
}`;

export const LATEST = `query {
  messages(perPage: 10) {
    ... on MessagePage { nodes { id to status createdAt } }
  }
}`;

export const STATS_CHANGED = 'subscription { messageStatsChanged { at } }';

export const MESSAGE_UPDATED = `subscription {
  messageUpdated { kind status message { id to status createdAt } }
}`;

export interface StatsRow {
  start?: string;
  country?: string | null;
  carrier?: string | null;
  messages: number;
  segments: number;
  delivered: number;
  failed: number;
  replies: number;
  optOuts: number;
  queued?: number | null;
  sent?: number | null;
  scheduled?: number | null;
}

export interface Campaign {
  id: string;
  name: string;
  status: string;
  stats: {
    contacts: number;
    waiting: number;
    queued: number;
    sent: number;
    delivered: number;
    failed: number;
  };
}

export interface LatestMessage {
  id: string;
  to: string;
  status: string;
  createdAt: string;
}

export interface Numbers {
  overview: {
    from: string;
    to: string;
    timezone: string;
    buckets: StatsRow[];
    totals: StatsRow[];
    message?: string;
  };
  byCountry: { totals: StatsRow[] };
  byCarrier: { totals: StatsRow[] };
  times: { delivered: number; p50: number | null; p90: number | null; p99: number | null };
  campaigns: { nodes: Campaign[] };
}
