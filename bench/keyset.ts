/** Index of the first pet whose id is greater than `after`, in an array sorted by id. */
export const firstAfter = (pets: ReadonlyArray<{ readonly id: bigint }>, after: bigint | undefined): number => {
  if (after === undefined) return 0
  let lo = 0
  let hi = pets.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (pets[mid]!.id <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}
