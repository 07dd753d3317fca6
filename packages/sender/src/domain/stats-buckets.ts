/**
 * An endpoint statistics window's buckets (design D45): five minutes over the last hour (an hour's
 * one bucket showed nothing of when within it), an hour up to a day, a day beyond. The size and
 * its name as the API gives it; the engine, the API and the dashboard read them here.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const STATS_BUCKETS = [
  { upTo: HOUR, ms: 5 * MINUTE, name: 'five minutes' },
  { upTo: DAY, ms: HOUR, name: 'hour' },
  { upTo: Number.POSITIVE_INFINITY, ms: DAY, name: 'day' },
] as const;
export type StatsBucket = (typeof STATS_BUCKETS)[number];
export type StatsBucketName = StatsBucket['name'];

/** The bucket of a window `length` ms long. */
export const statsBucketOf = (length: number): StatsBucket => STATS_BUCKETS.find((b) => length <= b.upTo)!;

/** The bucket named `name`, as the API gives it. */
export const statsBucketNamed = (name: StatsBucketName): StatsBucket =>
  STATS_BUCKETS.find((b) => b.name === name)!;
