// Small statistics helpers: medians, quantiles, paired ratios.

export function median(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank quantile of an already sorted list. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Median over rounds of a / b, pairing the two contenders' results of the same round. */
export function pairedRatio(aRounds, bRounds) {
  const ratios = [];
  for (let i = 0; i < Math.min(aRounds.length, bRounds.length); i++) {
    if (typeof aRounds[i] === 'number' && typeof bRounds[i] === 'number' && bRounds[i] > 0)
      ratios.push(aRounds[i] / bRounds[i]);
  }
  return median(ratios);
}

export function round(value, digits = 3) {
  if (value === null || value === undefined || !Number.isFinite(value)) return value ?? null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
