/** The k-th smallest (1-based) of the first `length` values; reorders them (quickselect). */
export function kthSmallest(values: Float64Array, length: number, k: number): number {
  let lo = 0;
  let hi = length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) < pivot) i++;
      while ((values[j] as number) > pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i] = values[j] as number;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target] as number;
  }
  return values[target] as number;
}
