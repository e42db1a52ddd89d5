import { useCallback, useEffect, useState } from 'preact/hooks';
import { graphql, subscribe } from './api';
import { ChartTable, StatusChart } from './chart';
import { Campaigns, FraudGuard, Latest, RateTable, Totals } from './panels';
import {
  LATEST,
  type LatestMessage,
  latestOf,
  MESSAGE_UPDATED,
  NUMBERS,
  type Numbers,
  numbersOf,
  STATS_CHANGED,
} from './queries';

const RANGES = {
  day: { label: 'Last 24 hours, by hour', hours: 24, interval: 'HOUR' },
  week: { label: 'Last 7 days, by day', hours: 24 * 7, interval: 'DAY' },
  month: { label: 'Last 30 days, by day', hours: 24 * 30, interval: 'DAY' },
  quarter: { label: 'Last 90 days, by day', hours: 24 * 90, interval: 'DAY' },
} as const;
type RangeName = keyof typeof RANGES;

/** The guard counts by UTC day: the days that cover the range. */
const guardDaysOf = (range: RangeName) => RANGES[range].hours / 24;

/** The latest messages with one that changed: moved in place, or added on top. */
function withUpdate(messages: LatestMessage[], changed: LatestMessage): LatestMessage[] {
  if (messages.some((message) => message.id === changed.id))
    return messages.map((message) => (message.id === changed.id ? changed : message));
  return [changed, ...messages].slice(0, 10);
}

function useNumbers(token: string, range: RangeName, onError: (error: Error) => void) {
  const [numbers, setNumbers] = useState<Numbers | null>(null);
  const load = useCallback(() => {
    const { hours, interval } = RANGES[range];
    const to = new Date();
    const from = new Date(to.getTime() - hours * 3_600_000);
    graphql(token, NUMBERS, {
      from: from.toISOString(),
      to: to.toISOString(),
      interval,
      guardDays: guardDaysOf(range),
    })
      .then((data) => setNumbers(numbersOf(data)))
      .catch(onError);
  }, [token, range, onError]);
  useEffect(() => {
    load();
    return subscribe(token, STATS_CHANGED, load);
  }, [token, load]);
  return numbers;
}

function useLatest(token: string, onError: (error: Error) => void) {
  const [latest, setLatest] = useState<LatestMessage[]>([]);
  useEffect(() => {
    graphql(token, LATEST, {})
      .then((data) => setLatest(latestOf(data)))
      .catch(onError);
    return subscribe(token, MESSAGE_UPDATED, ({ messageUpdated }) =>
      setLatest((messages) => withUpdate(messages, messageUpdated.message)),
    );
  }, [token, onError]);
  return latest;
}

export function Dashboard({ token, onSignOut }: { token: string; onSignOut: (problem?: string) => void }) {
  const [range, setRange] = useState<RangeName>('week');
  const onError = useCallback((error: Error) => onSignOut(error.message), [onSignOut]);
  const numbers = useNumbers(token, range, onError);
  const latest = useLatest(token, onError);
  return (
    <main class="dashboard">
      <header>
        <h1>Tern dashboard</h1>
        <label>
          Range
          <select
            value={range}
            onChange={(event) => setRange((event.currentTarget as HTMLSelectElement).value as RangeName)}
          >
            {Object.entries(RANGES).map(([name, { label }]) => (
              <option key={name} value={name}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      {numbers ? (
        <NumbersPanels numbers={numbers} guardDays={guardDaysOf(range)} />
      ) : (
        <p role="status">Loading the numbers…</p>
      )}
      <Latest messages={latest} timezone={numbers?.overview.timezone} />
    </main>
  );
}

function NumbersPanels({ numbers, guardDays }: { numbers: Numbers; guardDays: number }) {
  const { overview } = numbers;
  // A cancelled message never goes to a carrier: it is not among those waiting for one.
  const byCarrier = numbers.byCarrier.totals.map((row) =>
    row.carrier === null ? { ...row, messages: row.messages - (row.cancelled ?? 0) } : row,
  );
  return (
    <>
      <Totals numbers={numbers} />
      <section class="panel wide" aria-labelledby="chart-title">
        <h2 id="chart-title">Messages by status ({overview.timezone})</h2>
        <StatusChart overview={overview} />
        <ChartTable buckets={overview.buckets} timezone={overview.timezone} />
      </section>
      <RateTable
        title="Delivery rate by country"
        column="Country"
        rows={numbers.byCountry.totals}
        keyOf={(row) => row.country ?? 'unknown'}
      />
      <RateTable
        title="Delivery rate by carrier"
        column="Carrier"
        rows={byCarrier.filter((row) => row.messages > 0)}
        keyOf={(row) => row.carrier ?? 'not handed over yet'}
      />
      <FraudGuard guard={numbers.guard} days={guardDays} timezone={overview.timezone} />
      <Campaigns campaigns={numbers.campaigns.nodes} />
    </>
  );
}
