import type { Campaign, GuardTotal, LatestMessage, Numbers, StatsRow } from './queries';

const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–');

/** The share of the messages that reached an end which were delivered. */
export const deliveryRate = (row: StatsRow) => percent(row.delivered, row.delivered + row.failed);

export function Totals({ numbers }: { numbers: Numbers }) {
  const totals = numbers.overview.totals[0];
  if (!totals) return null;
  const { times } = numbers;
  const seconds = (value: number | null) => (value === null ? '–' : `${value} s`);
  const items: [string, string][] = [
    ['Messages', String(totals.messages)],
    ['Segments', String(totals.segments)],
    ['Delivered', String(totals.delivered)],
    ['Failed', String(totals.failed)],
    ['Delivery rate', deliveryRate(totals)],
    ['Replies', String(totals.replies)],
    ['Opt-outs', String(totals.optOuts)],
    [
      'Delivery time p50 / p90 / p99',
      `${seconds(times.p50)} / ${seconds(times.p90)} / ${seconds(times.p99)}`,
    ],
  ];
  return (
    <section aria-labelledby="totals-title" class="panel totals">
      <h2 id="totals-title">Totals</h2>
      <dl>
        {items.map(([term, value]) => (
          <div key={term} data-total={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

interface RateTableProps<Row extends StatsRow> {
  title: string;
  column: string;
  rows: Row[];
  keyOf: (row: Row) => string;
}

export function RateTable<Row extends StatsRow>({ title, column, rows, keyOf }: RateTableProps<Row>) {
  const sorted = [...rows].sort((a, b) => b.messages - a.messages);
  return (
    <section class="panel" aria-label={title}>
      <div class="table-scroll">
        <table class="rates">
          <caption>{title}</caption>
          <thead>
            <tr>
              <th scope="col">{column}</th>
              <th scope="col">Messages</th>
              <th scope="col">Delivered</th>
              <th scope="col">Failed</th>
              <th scope="col">Rate</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((row) => (
              <tr key={keyOf(row)}>
                <th scope="row">{keyOf(row)}</th>
                <td>{row.messages}</td>
                <td>{row.delivered}</td>
                <td>{row.failed}</td>
                <td>{deliveryRate(row)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function Campaigns({ campaigns }: { campaigns: Campaign[] }) {
  return (
    <section class="panel" aria-labelledby="campaigns-title">
      <h2 id="campaigns-title">Campaigns</h2>
      {campaigns.length === 0 && <p>No campaigns yet.</p>}
      <ul class="campaigns">
        {campaigns.map(({ id, name, status, stats }) => {
          const done = stats.delivered + stats.failed;
          const total = Math.max(stats.contacts, done + stats.queued + stats.sent + stats.waiting);
          return (
            <li key={id}>
              <span class="name">{name}</span> <span class="status">{status}</span>
              <progress
                max={total || 1}
                value={done}
                aria-label={`${name}: ${done} of ${total} messages done`}
              />
              <span class="figures">
                {done} / {total} · {percent(stats.delivered, done)} delivered
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

const SHORT_TEXT = 40;
const shortText = (text: string) => (text.length > SHORT_TEXT ? `${text.slice(0, SHORT_TEXT - 1)}…` : text);

/** The newest messages: when, to whom, what, and how far each got (carrier, error code). */
export function Latest({ messages, timezone }: { messages: LatestMessage[]; timezone: string | undefined }) {
  const time = new Intl.DateTimeFormat(undefined, {
    timeZone: timezone,
    dateStyle: 'short',
    timeStyle: 'medium',
  });
  return (
    <section class="panel wide" aria-labelledby="latest-title">
      <h2 id="latest-title">Latest messages</h2>
      <div class="table-scroll">
        <table class="latest">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">To</th>
              <th scope="col">Text</th>
              <th scope="col">Status</th>
              <th scope="col">Carrier</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody aria-live="polite">
            {messages.map((message) => (
              <tr key={message.id} data-message={message.id}>
                <td>
                  <time dateTime={message.createdAt}>{time.format(new Date(message.createdAt))}</time>
                </td>
                <td>+{message.to}</td>
                <td title={message.text}>{shortText(message.text)}</td>
                <td class={`status-${message.status}`}>{message.status}</td>
                <td>{message.carrier ?? '–'}</td>
                <td>{message.error?.code ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Refused (`blocked`) and would-be refused (`monitored`) messages of the period, as the API summed them. */
function DecisionTable<Total extends GuardTotal>({
  caption,
  column,
  totals,
  keyOf,
}: {
  caption: string;
  column: string;
  totals: Total[];
  keyOf: (total: Total) => string;
}) {
  return (
    <table class="rates">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{column}</th>
          <th scope="col">Refused</th>
          <th scope="col">Monitored</th>
        </tr>
      </thead>
      <tbody>
        {totals.map((total) => (
          <tr key={keyOf(total)}>
            <th scope="row">{keyOf(total)}</th>
            <td>{total.blocked}</td>
            <td>{total.monitored}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface FraudGuardProps {
  guard: Numbers['guard'];
  days: number;
  timezone: string;
}

/**
 * What the fraud guard refused over the period (monitored: what it would have, in monitor mode),
 * by rule and by country, and the countries it blocks now with the end of each cool-off.
 */
export function FraudGuard({ guard, days, timezone }: FraudGuardProps) {
  const { totalsByRule, totalsByCountry, blockedCountries: blocked } = guard;
  const time = new Intl.DateTimeFormat(undefined, {
    timeZone: timezone,
    dateStyle: 'short',
    timeStyle: 'short',
  });
  const period = days === 1 ? 'today (UTC)' : `the last ${days} UTC days`;
  return (
    <section class="panel wide" aria-labelledby="guard-title">
      <h2 id="guard-title">Fraud guard</h2>
      {totalsByRule.length === 0 && <p>Nothing refused {period}.</p>}
      {totalsByRule.length > 0 && (
        <div class="table-scroll guard">
          <DecisionTable
            caption={`Refusals by rule, ${period}`}
            column="Rule"
            totals={totalsByRule}
            keyOf={(total) => total.rule}
          />
          <DecisionTable
            caption={`Refusals by country, ${period}`}
            column="Country"
            totals={totalsByCountry}
            keyOf={(total) => total.country ?? 'unknown'}
          />
        </div>
      )}
      <h3>Blocked countries</h3>
      {blocked.length === 0 && <p>No country is blocked.</p>}
      <ul class="blocked-countries">
        {blocked.map(({ country, until }) => (
          <li key={country} data-blocked={country}>
            <strong>{country}</strong> until <time dateTime={until}>{time.format(new Date(until))}</time>
          </li>
        ))}
      </ul>
    </section>
  );
}
