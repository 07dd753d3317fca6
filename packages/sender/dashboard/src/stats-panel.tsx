import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { api, type EndpointStats } from './api.js';
import { formatMoment, formatSpan } from './timeline.js';

const WINDOWS = ['1h', '24h', '7d', '30d'];
const OK = '#1a7f37';
const FAILED = '#cf222e';

/** An endpoint's statistics (design D45): attempts per bucket by outcome, success rate, latency. */
export function StatsPanel({ endpointId }: { endpointId: string }) {
  const [window, setWindow] = useState('24h');
  const [stats, setStats] = useState<EndpointStats | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = () =>
      api.stats(endpointId, window).then(
        (s) => {
          setStats(s);
          setError(null);
        },
        (err: Error) => setError(err.message),
      );
    void load();
    const timer = setInterval(() => void load(), 30_000);
    return () => clearInterval(timer);
  }, [endpointId, window]);
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
          <AttemptsChart stats={stats} />
        </>
      )}
    </section>
  );
}

/** Attempts per bucket, succeeded and failed side by side, drawn by uPlot on a canvas. */
function AttemptsChart({ stats }: { stats: EndpointStats }) {
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
      ({ chart, resize } = draw(UPlot, el, stats));
    });
    return () => {
      gone = true;
      resize?.disconnect();
      chart?.destroy();
    };
  }, [stats]);
  return (
    <figure class="chart">
      <figcaption>Attempts per {stats.bucket}, by outcome</figcaption>
      <div ref={box} class="chart-box" />
    </figure>
  );
}

function draw(UPlot: typeof uPlot, el: HTMLElement, stats: EndpointStats) {
  // Each bucket's bars sit in its middle, and an empty count draws nothing rather than a flat line.
  const bucketS = stats.bucket === 'hour' ? 3600 : 86_400;
  const starts = stats.buckets.map((b) => Date.parse(b.start) / 1000);
  const data: uPlot.AlignedData = [
    starts.map((s) => s + bucketS / 2),
    stats.buckets.map((b) => b.succeeded || null),
    stats.buckets.map((b) => b.failed || null),
  ];
  const xRange: uPlot.Range.MinMax = [starts[0] ?? 0, (starts.at(-1) ?? 0) + bucketS];
  const bars = UPlot.paths.bars!({ size: [0.4, 24], align: 1 });
  const failedBars = UPlot.paths.bars!({ size: [0.4, 24], align: -1 });
  const width = () => Math.max(240, el.clientWidth);
  const chart = new UPlot(
    {
      width: width(),
      height: 220,
      legend: { live: false },
      scales: {
        x: { time: true, range: () => xRange },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [{}, { label: 'attempts', size: 50 }],
      series: [
        {},
        { label: 'Succeeded', stroke: OK, fill: `${OK}cc`, paths: bars, points: { show: false } },
        {
          label: 'Failed',
          stroke: FAILED,
          fill: `${FAILED}cc`,
          paths: failedBars,
          points: { show: false },
        },
      ],
    },
    data,
    el,
  );
  const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: 220 }));
  resize.observe(el);
  return { chart, resize };
}
