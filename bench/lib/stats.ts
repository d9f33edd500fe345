// Summaries of latency samples (milliseconds): nearest-rank percentiles over every sample, no histogram.

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The nearest-rank percentile `p` (0-100) of ascending `sorted`. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    mean: round(sum / Math.max(1, sorted.length)),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? Number.NaN),
  };
}

/** Two decimals: enough for milliseconds and ratios, short in JSON. */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** figure ÷ ceiling, 3 decimals (null when the ceiling is missing or zero). */
export function ratio(figure: number, ceiling: number): number | null {
  if (!Number.isFinite(figure) || !Number.isFinite(ceiling) || ceiling === 0) return null;
  return round(figure / ceiling, 3);
}
