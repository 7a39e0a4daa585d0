import pg from "pg";
const c = new pg.Client({ connectionString: "postgresql://postgres@127.0.0.1:55871/postgres" });
await c.connect();
for (;;) {
  const { rows } = await c.query(`select pid, coalesce(wait_event_type,'-') wt, coalesce(wait_event,'-') we, left(regexp_replace(query,'\\s+',' ','g'),50) q, round(extract(epoch from clock_timestamp()-query_start)*1000) ms from pg_stat_activity where state='active' and pid<>pg_backend_pid() and backend_type='client backend'`);
  const t = new Date().toISOString().slice(11, 23);
  for (const r of rows) console.log(`${t}\t${r.pid}\t${r.wt}\t${r.we}\t${r.ms}\t${r.q}`);
  await new Promise((r) => setTimeout(r, 20));
}
