// Loaded into a test's child server with `--import`: records every module the process loads
// (node:module's load hook) and, on SIGUSR2, writes to HEAP_PROBE_OUT the URLs loaded so far and
// the V8 heap's spaces (MB reserved), then says so on stdout ("heap probe written").
import { writeFileSync } from "node:fs";
import { registerHooks } from "node:module";
import { getHeapSpaceStatistics } from "node:v8";

const loaded = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});

process.on("SIGUSR2", () => {
  const spacesMb = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size / 1_048_576]));
  writeFileSync(process.env.HEAP_PROBE_OUT, JSON.stringify({ loaded, spacesMb }));
  process.stdout.write("heap probe written\n");
});
