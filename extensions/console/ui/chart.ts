/** Helpers for the uPlot charts of the console. */
import type uPlot from 'uplot';

/** Axis labels with as many decimals as the step between them needs, so no two labels read the same. */
export function axisLabels(prefix: string) {
  return (_: uPlot, splits: number[]) => {
    const step = splits.length > 1 ? Math.abs(splits[1]! - splits[0]!) : Math.abs(splits[0] ?? 1);
    const decimals = step > 0 ? Math.min(8, Math.max(0, Math.ceil(-Math.log10(step)))) : 2;
    return splits.map((v) => `${prefix}${v.toFixed(decimals)}`);
  };
}
