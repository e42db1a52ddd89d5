/**
 * What the page shows, as the types generated from its operations (src/dashboard/operations.graphql):
 * each result union narrowed to its success member.
 */
import { success } from './api';
import type {
  DashboardLatestQuery,
  DashboardMessageFragment,
  DashboardNumbersQuery,
  DashboardStatsRowFragment,
} from './generated/graphql';

export {
  DashboardLatestDocument as LATEST,
  DashboardLoginDocument as LOGIN,
  DashboardMessageUpdatedDocument as MESSAGE_UPDATED,
  DashboardNumbersDocument as NUMBERS,
  DashboardStatsChangedDocument as STATS_CHANGED,
} from './generated/graphql';

export type StatsRow = DashboardStatsRowFragment;
export type LatestMessage = DashboardMessageFragment;

type Success<Result extends { __typename: string }, Name extends string> = Extract<
  Result,
  { __typename: Name }
>;
type Query = DashboardNumbersQuery;

export interface Numbers {
  overview: Success<Query['overview'], 'MessageStats'>;
  byCountry: Success<Query['byCountry'], 'MessageStats'>;
  byCarrier: Success<Query['byCarrier'], 'MessageStats'>;
  times: Success<Query['times'], 'DeliveryTimes'>;
  guard: Success<Query['guard'], 'FraudDecisions'>;
  campaigns: Success<Query['campaigns'], 'CampaignPage'>;
}
export type Bucket = Numbers['overview']['buckets'][number];
/** What the guard refused, and would have in monitor mode, of one rule or country over the period. */
export type GuardTotal = Pick<Numbers['guard']['totalsByRule'][number], 'blocked' | 'monitored'>;
export type Campaign = Numbers['campaigns']['nodes'][number];

export function numbersOf(data: Query): Numbers {
  return {
    overview: success(data.overview, 'MessageStats'),
    byCountry: success(data.byCountry, 'MessageStats'),
    byCarrier: success(data.byCarrier, 'MessageStats'),
    times: success(data.times, 'DeliveryTimes'),
    guard: success(data.guard, 'FraudDecisions'),
    campaigns: success(data.campaigns, 'CampaignPage'),
  };
}

export function latestOf(data: DashboardLatestQuery): LatestMessage[] {
  return success(data.messages, 'MessagePage').nodes;
}
