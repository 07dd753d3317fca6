import pg from 'pg';
const stats = new Map();
const orig = pg.Pool.prototype.query;
pg.Pool.prototype.query = function (q, v) {
  const text = typeof q === 'string' ? q : q.text;
  const key = text.trim().split('\n')[0].slice(0, 30);
  const t = performance.now();
  const waiting = this.waitingCount, idle = this.idleCount, total = this.totalCount;
  const p = orig.call(this, q, v);
  p.then(() => { const s = stats.get(key) ?? { n: 0, ms: 0, waiting: 0, idle: 0, total: 0 }; s.n++; s.ms += performance.now() - t; s.waiting += waiting; s.idle += idle; s.total += total; stats.set(key, s); }, () => {});
  return p;
};
const origC = pg.Client.prototype.query;
const cstats = { n: 0, ms: 0 };
process.on('exit', () => {
  for (const [k, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 3)) console.log(String(s.n).padStart(7), (s.ms / s.n).toFixed(2), 'ms avg; waiting', (s.waiting / s.n).toFixed(1), 'idle', (s.idle / s.n).toFixed(1), 'total', (s.total / s.n).toFixed(1), k);
});
process.argv.push('throughput');
await import('./run.mjs');
