// Preloaded into a server by bench/rss-phases.ts (NODE_OPTIONS=--import): on SIGWINCH (a signal
// close-with-grace leaves alone) it writes the process's own view of its memory to MEM_PROBE_FILE
// (process.memoryUsage, V8's heap spaces and code statistics, in MiB), and a heap snapshot beside
// it when MEM_PROBE_SNAPSHOT is set. Plain JavaScript: a .ts preload would load Node's TypeScript
// stripper (~10 MB of RSS and 3.7 MB of heap) into the process it measures.
import { renameSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.MEM_PROBE_FILE;
const mb = (b) => Math.round((b / 1048576) * 10) / 10;
if (file) {
  let n = 0;
  process.on('SIGWINCH', () => {
    n++;
    const usage = Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, mb(v)]));
    const spaces = Object.fromEntries(
      v8
        .getHeapSpaceStatistics()
        .map((s) => [s.space_name, [mb(s.space_used_size), mb(s.physical_space_size)]]),
    );
    const code = v8.getHeapCodeStatistics();
    const snapshot = process.env.MEM_PROBE_SNAPSHOT
      ? v8.writeHeapSnapshot(`${file}.${n}.heapsnapshot`)
      : null;
    const report = {
      usage,
      spaces,
      bytecode: mb(code.bytecode_and_metadata_size),
      code: mb(code.code_and_metadata_size),
      snapshot,
    };
    // Written then renamed, so the reader never sees half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify(report));
    renameSync(`${file}.tmp`, file);
  });
}
