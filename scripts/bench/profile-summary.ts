// Summarises a V8 .cpuprofile (from `node --cpu-prof`): where CPU time went, by component
// (self time, and inclusive time: share of samples with that component anywhere on the stack).
import { readFileSync } from "node:fs";

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

export type ProfileSummary = {
  totalMs: number;
  busyMs: number;
  byComponentSelf: { component: string; ms: number; pct: number }[];
  byComponentInclusive: { component: string; ms: number; pct: number }[];
  topFunctions: { fn: string; component: string; selfMs: number; pct: number }[];
};

/** The component a frame belongs to: an npm package, a folder of ours, node internals, or V8. */
function componentOf(url: string, fn: string): string {
  if (!url) {
    if (fn === "(idle)") return "(idle)";
    if (fn === "(garbage collector)") return "V8: garbage collector";
    if (fn === "(program)") return "V8: (program)";
    return "native / V8 builtins";
  }
  const nm = url.lastIndexOf("node_modules/");
  if (nm !== -1) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    const pkg = rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
    if (pkg === "next" && url.includes("/compiled/")) return "next (compiled deps)";
    return pkg;
  }
  if (url.startsWith("node:")) {
    if (/node:internal\/deps\/undici/.test(url)) return "node: undici (fetch Request/Response)";
    if (/node:internal\/webstreams/.test(url)) return "node: web streams";
    if (/node:_http|node:internal\/http|node:http/.test(url)) return "node: http";
    if (/node:net|node:internal\/stream_base|node:internal\/net/.test(url)) return "node: net";
    return "node: other internals";
  }
  const m = /\/(server\/db\/generated|server\/[^/]+|scripts\/bench|app\/[^/]+)\//.exec(url);
  if (m) return `app: ${m[1]}`;
  if (url.includes("/.next/")) return "next build output (bundled app)";
  return url
    .replace(/^file:\/\//, "")
    .split("/")
    .slice(-2)
    .join("/");
}

/** `window` (microseconds of CLOCK_MONOTONIC, like V8's profile clock) keeps only the measured run. */
export function summariseProfile(file: string, top = 15, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map<number, Node>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const selfUs = new Map<number, number>();
  const inWindow = (t: number) => !window || (t >= window.fromUs && t <= window.toUs);
  const windowHasSamples = window !== undefined && profile.startTime <= window.toUs && profile.endTime >= window.fromUs;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    if (windowHasSamples && !inWindow(t)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });

  const compSelf = new Map<string, number>();
  const compIncl = new Map<string, number>();
  const fnSelf = new Map<string, { component: string; us: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const component = componentOf(url, functionName);
    totalUs += us;
    if (component === "(idle)") {
      idleUs += us;
      continue;
    }
    compSelf.set(component, (compSelf.get(component) ?? 0) + us);
    const key = `${functionName || "(anonymous)"} ${url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(server|scripts|app)\//, "$1/")}:${lineNumber + 1}`;
    const f = fnSelf.get(key) ?? { component, us: 0 };
    f.us += us;
    fnSelf.set(key, f);
    // Inclusive: every component on this stack, once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (cf.functionName === "(root)") continue;
      seen.add(componentOf(cf.url, cf.functionName));
    }
    for (const c of seen) compIncl.set(c, (compIncl.get(c) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => Math.round((1000 * us) / Math.max(busyUs, 1)) / 10;
  const ms = (us: number) => Math.round(us / 100) / 10;
  const rank = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([component, us]) => ({ component, ms: ms(us), pct: pct(us) }));
  return {
    totalMs: ms(totalUs),
    busyMs: ms(busyUs),
    byComponentSelf: rank(compSelf),
    byComponentInclusive: rank(compIncl),
    topFunctions: [...fnSelf]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([fn, v]) => ({ fn, component: v.component, selfMs: ms(v.us), pct: pct(v.us) })),
  };
}
