import v8 from 'node:v8';
import vm from 'node:vm';

/** Below this many restored bookings the start-up leaves too little garbage to be worth collecting. */
const worthCollectingFrom = 1000;
/**
 * Collections stop once one gives back less than this share of the heap (not before `minCollections`), or after
 * `maxCollections`.
 */
const stillShrinking = 0.02;
const minCollections = 3;
const maxCollections = 8;

/**
 * Full garbage collections once the start-up is done, until the heap stops shrinking.
 * Rebuilding the plan reads every live agreement (a page at a time), and V8 leaves the
 * garbage of that read, and the heap it grew, in place until memory runs short. One
 * collection frees the garbage but compacts only the most fragmented pages, so a first one
 * may give back little and the next ones much (100,000 live agreements: 320, 300, 213, 195,
 * 190 MB of heap); stopping at a step under 10 % left 400 MB resident one start in three,
 * instead of 285. With 4 MiB semi-spaces one start in eight still served at 406 MB when
 * any step under 2 % could stop it; the first three now run whatever they give back
 * (docs/benchmarks.md: none in eight starts since). `global.gc` exists only under
 * --expose-gc, so the flag is set at run time and the function taken from a new context,
 * as jest-leak-detector does.
 */
export function collectStartUpGarbage(restoredBookings: number): void {
  if (restoredBookings < worthCollectingFrom) return;
  const gc = (globalThis as { gc?: () => void }).gc ?? exposedGc();
  let heap = v8.getHeapStatistics().total_heap_size;
  for (let i = 0; i < maxCollections; i++) {
    gc();
    const after = v8.getHeapStatistics().total_heap_size;
    if (i + 1 >= minCollections && heap - after < stillShrinking * heap) return;
    heap = after;
  }
}

function exposedGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
