import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { statsBucketNamed } from '../../src/domain/stats-buckets.js';
import { api, type EndpointStats } from './api.js';
import { formatMoment, formatSpan } from './timeline.js';
import { usePolling } from './use-polling.js';

const WINDOWS = ['1h', '24h', '7d', '30d'];
const OK = '#1a7f37';
const FAILED = '#cf222e';
const MEAN = '#0969da';
const SLOWEST = '#8250df';

/** An endpoint's statistics (design D45): attempts per bucket by outcome, success rate, latency. */
export function StatsPanel({ endpointId }: { endpointId: string }) {
  const [window, setWindow] = useState('24h');
  const [stats, setStats] = useState<EndpointStats | null>(null);
  const [error, setError] = useState<string | null>(null);
  usePolling(
    () => api.stats(endpointId, window),
    (s) => {
      setStats(s);
      setError(null);
    },
    (err) => setError(err.message),
    30_000,
    [endpointId, window],
  );
  const now = Date.now();
  const time = (iso: string | null) => (iso ? formatMoment(Date.parse(iso), now) : 'none in the window');
  return (
    <section class="stats" aria-labelledby="stats-title">
      <h3 id="stats-title">Statistics</h3>
      <label for="stats-window">Window</label>{' '}
      <select
        id="stats-window"
        value={window}
        onChange={(e) => setWindow((e.target as HTMLSelectElement).value)}
      >
        {WINDOWS.map((w) => (
          <option key={w} value={w}>
            last {w}
          </option>
        ))}
      </select>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {stats && (
        <>
          <dl class="facts stats-values">
            <dt>Deliveries</dt>
            <dd data-stat="deliveries">{deliveriesByStatus(stats.deliveries)}</dd>
            <dt>Attempts</dt>
            <dd data-stat="attempts">
              {stats.attempts.total} ({stats.attempts.succeeded} succeeded, {stats.attempts.failed} failed)
            </dd>
            <dt>Success rate</dt>
            <dd data-stat="success-rate">
              {stats.success_rate === null ? '—' : `${(stats.success_rate * 100).toFixed(1)} %`}
            </dd>
            <dt>Latency</dt>
            <dd data-stat="latency">
              p50 {stats.latency_ms.p50 === null ? '—' : formatSpan(stats.latency_ms.p50)} · p95{' '}
              {stats.latency_ms.p95 === null ? '—' : formatSpan(stats.latency_ms.p95)}
            </dd>
            <dt>Last success</dt>
            <dd data-stat="last-success">{time(stats.last_success_at)}</dd>
            <dt>Last failure</dt>
            <dd data-stat="last-failure">{time(stats.last_failure_at)}</dd>
          </dl>
          <Chart stats={stats} caption={`Attempts per ${stats.bucket}, by outcome`} build={attemptsChart} />
          <Chart stats={stats} caption={`Time to answer per ${stats.bucket}`} build={latencyChart} />
        </>
      )}
    </section>
  );
}

/** The window's deliveries by status, most first: "12 delivered, 3 failed"; "none" for none. */
function deliveriesByStatus(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([status, n]) => `${n} ${status.replace('_', ' ')}`);
  return parts.length === 0 ? 'none in the window' : parts.join(', ');
}

type Built = { options: Omit<uPlot.Options, 'width' | 'height'>; data: uPlot.AlignedData };
type Build = (UPlot: typeof uPlot, stats: EndpointStats) => Built;

/** A chart of the buckets, drawn by uPlot on a canvas. */
function Chart({ stats, caption, build }: { stats: EndpointStats; caption: string; build: Build }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let chart: uPlot | undefined;
    let resize: ResizeObserver | undefined;
    let gone = false;
    // uPlot is its own chunk: only this page loads it.
    void import('uplot').then(({ default: UPlot }) => {
      if (gone) return;
      ({ chart, resize } = draw(UPlot, el, build(UPlot, stats)));
    });
    return () => {
      gone = true;
      resize?.disconnect();
      chart?.destroy();
    };
  }, [stats, build]);
  return (
    <figure class="chart">
      <figcaption>{caption}</figcaption>
      <div ref={box} class="chart-box" />
    </figure>
  );
}

const HEIGHT = 220;

function draw(UPlot: typeof uPlot, el: HTMLElement, { options, data }: Built) {
  const width = () => Math.max(240, el.clientWidth);
  const chart = new UPlot({ ...options, width: width(), height: HEIGHT }, data, el);
  const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: HEIGHT }));
  resize.observe(el);
  return { chart, resize };
}

/** Each bucket's middle on the time axis, and the window's range, in Unix seconds. */
function timeAxis(stats: EndpointStats) {
  const bucketS = statsBucketNamed(stats.bucket).ms / 1000;
  const starts = stats.buckets.map((b) => Date.parse(b.start) / 1000);
  const range: uPlot.Range.MinMax = [starts[0] ?? 0, (starts.at(-1) ?? 0) + bucketS];
  return { middles: starts.map((s) => s + bucketS / 2), range };
}

/** Attempts per bucket, succeeded and failed side by side; an empty count draws nothing. */
const attemptsChart: Build = (UPlot, stats) => {
  const { middles, range } = timeAxis(stats);
  const bars = UPlot.paths.bars!({ size: [0.4, 24], align: 1 });
  const failedBars = UPlot.paths.bars!({ size: [0.4, 24], align: -1 });
  return {
    data: [
      middles,
      stats.buckets.map((b) => b.succeeded || null),
      stats.buckets.map((b) => b.failed || null),
    ],
    options: {
      legend: { live: false },
      scales: {
        x: { time: true, range: () => range },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [{}, { label: 'attempts', size: 50 }],
      series: [
        {},
        { label: 'Succeeded', stroke: OK, fill: `${OK}cc`, paths: bars, points: { show: false } },
        { label: 'Failed', stroke: FAILED, fill: `${FAILED}cc`, paths: failedBars, points: { show: false } },
      ],
    },
  };
};

/** The mean and the slowest attempt per bucket; a bucket without attempts leaves a gap. */
const latencyChart: Build = (_UPlot, stats) => {
  const { middles, range } = timeAxis(stats);
  return {
    data: [middles, stats.buckets.map((b) => b.latency_ms.mean), stats.buckets.map((b) => b.latency_ms.max)],
    options: {
      legend: { live: false },
      scales: {
        x: { time: true, range: () => range },
        y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] },
      },
      axes: [{}, { label: 'ms', size: 60 }],
      series: [
        {},
        { label: 'Mean', stroke: MEAN, width: 2, points: { show: true, size: 6 } },
        { label: 'Slowest', stroke: SLOWEST, width: 1, dash: [4, 4], points: { show: true, size: 5 } },
      ],
    },
  };
};
