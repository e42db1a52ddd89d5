import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Bucket, Numbers } from './queries';

const SERIES = [
  { label: 'Delivered', stroke: '#1b7f3b', pick: (row: Bucket) => row.delivered },
  { label: 'Failed', stroke: '#b3261e', pick: (row: Bucket) => row.failed },
  {
    label: 'On their way',
    stroke: '#7a5c00',
    pick: (row: Bucket) => (row.queued ?? 0) + (row.sent ?? 0) + (row.scheduled ?? 0),
  },
];

type Overview = Numbers['overview'];
const HOUR_MS = 3_600_000;
const secondsOf = (iso: string) => new Date(iso).getTime() / 1000;

/**
 * The start of every bucket of the range, in seconds. The API leaves out a bucket with no numbers;
 * the chart draws it as zeros, so that its lines join instead of standing as lone dots. A day of
 * the account's time zone is 23 or 25 hours across a change of clocks: each start is put back on
 * midnight there.
 */
function bucketStarts({ from, to, interval, timezone, buckets }: Overview): number[] {
  const hourThere = new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    hour: 'numeric',
    hourCycle: 'h23',
  });
  const step = interval === 'DAY' ? 24 * HOUR_MS : HOUR_MS;
  const given = buckets.map((row) => new Date(row.start ?? 0).getTime());
  const starts = new Set(given);
  const end = new Date(to).getTime();
  for (let at = new Date(from).getTime(); at < end; at += step) {
    if (interval === 'DAY') {
      const hour = Number(hourThere.format(at));
      if (hour === 23) at += HOUR_MS;
      else if (hour === 1) at -= HOUR_MS;
    }
    if (!given.some((start) => Math.abs(start - at) < step / 2)) starts.add(at);
  }
  return [...starts].sort((a, b) => a - b).map((ms) => ms / 1000);
}

/** At most `most` of the day starts, evenly spaced, for the x axis's ticks. */
function daySplits(starts: number[], most: number): number[] {
  const every = Math.max(1, Math.ceil(starts.length / most));
  return starts.filter((_, index) => index % every === 0);
}

function optionsFor(width: number, overview: Overview, starts: number[], holder: HTMLElement): uPlot.Options {
  const { timezone, from, to, interval } = overview;
  const day = new Intl.DateTimeFormat(undefined, { timeZone: timezone, month: 'short', day: 'numeric' });
  // By day, one tick a day (fewer on a narrow chart), named by its date, not by a time of day.
  const dayAxis: uPlot.Axis = {
    splits: () => daySplits(starts, Math.max(2, Math.floor(width / 70))),
    values: (_plot, splits) => {
      const labels = splits.map((seconds) => day.format(seconds * 1000));
      holder.dataset.ticks = labels.join('|');
      return labels;
    },
  };
  return {
    width,
    height: 260,
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timezone),
    scales: {
      x: { time: true, range: () => [secondsOf(from), secondsOf(to)] },
      y: { range: (_plot, _min, max) => [0, Math.max(1, max)] },
    },
    axes: [interval === 'DAY' ? dayAxis : {}, { label: 'Messages' }],
    series: [
      { label: 'Bucket start' },
      ...SERIES.map(({ label, stroke }) => ({ label, stroke, width: 2, points: { show: true } })),
    ],
  };
}

function dataOf(overview: Overview, starts: number[]): uPlot.AlignedData {
  const byStart = new Map(overview.buckets.map((row) => [secondsOf(row.start ?? ''), row]));
  return [
    starts,
    ...SERIES.map(({ pick }) =>
      starts.map((start) => {
        const row = byStart.get(start);
        return row ? pick(row) : 0;
      }),
    ),
  ];
}

/** Messages per bucket by status, drawn by uPlot at the width of its container. */
export function StatusChart({ overview }: { overview: Overview }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const starts = bucketStarts(overview);
    element.dataset.buckets = String(starts.length);
    const width = element.clientWidth || 600;
    const plot = new uPlot(optionsFor(width, overview, starts, element), dataOf(overview, starts), element);
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [overview]);
  return <div ref={holder} class="chart" />;
}

/** The chart's numbers as a table, for screen readers and for reading exact values. */
export function ChartTable({ buckets, timezone }: { buckets: Bucket[]; timezone: string }) {
  const format = new Intl.DateTimeFormat(undefined, {
    timeZone: timezone,
    dateStyle: 'short',
    timeStyle: 'short',
  });
  return (
    <details>
      <summary>The chart as a table</summary>
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Start</th>
              {SERIES.map(({ label }) => (
                <th scope="col" key={label}>
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {buckets.map((row) => (
              <tr key={row.start}>
                <th scope="row">{format.format(new Date(row.start ?? 0))}</th>
                {SERIES.map(({ label, pick }) => (
                  <td key={label}>{pick(row)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
