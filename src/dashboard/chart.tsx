import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { StatsRow } from './queries';

const SERIES = [
  { label: 'Delivered', stroke: '#1b7f3b', pick: (row: StatsRow) => row.delivered },
  { label: 'Failed', stroke: '#b3261e', pick: (row: StatsRow) => row.failed },
  {
    label: 'On their way',
    stroke: '#7a5c00',
    pick: (row: StatsRow) => (row.queued ?? 0) + (row.sent ?? 0) + (row.scheduled ?? 0),
  },
];

interface ChartProps {
  buckets: StatsRow[];
  timezone: string;
  /** The range the buckets are of, so that a range with few buckets is drawn at its own scale. */
  from: string;
  to: string;
}

const secondsOf = (iso: string) => new Date(iso).getTime() / 1000;

function optionsFor(width: number, { timezone, from, to }: ChartProps): uPlot.Options {
  return {
    width,
    height: 260,
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timezone),
    scales: {
      x: { time: true, range: () => [secondsOf(from), secondsOf(to)] },
      y: { range: (_plot, _min, max) => [0, Math.max(1, max)] },
    },
    axes: [{}, { label: 'Messages' }],
    series: [
      { label: 'Bucket start' },
      ...SERIES.map(({ label, stroke }) => ({ label, stroke, width: 2, points: { show: true } })),
    ],
  };
}

function dataOf(buckets: StatsRow[]): uPlot.AlignedData {
  return [buckets.map((row) => secondsOf(row.start ?? '')), ...SERIES.map(({ pick }) => buckets.map(pick))];
}

/** Messages per bucket by status, drawn by uPlot at the width of its container. */
export function StatusChart(props: ChartProps) {
  const { buckets, timezone, from, to } = props;
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const plot = new uPlot(
      optionsFor(element.clientWidth || 600, { buckets, timezone, from, to }),
      dataOf(buckets),
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [buckets, timezone, from, to]);
  return <div ref={holder} class="chart" />;
}

/** The chart's numbers as a table, for screen readers and for reading exact values. */
export function ChartTable({ buckets, timezone }: { buckets: StatsRow[]; timezone: string }) {
  const format = new Intl.DateTimeFormat(undefined, {
    timeZone: timezone,
    dateStyle: 'short',
    timeStyle: 'short',
  });
  return (
    <details>
      <summary>The chart as a table</summary>
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
    </details>
  );
}
