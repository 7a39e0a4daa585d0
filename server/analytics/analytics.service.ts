// The analytics rollup: per-UTC-day counts computed by PostgreSQL in one round trip, zero-filled
// in SQL. Messages and conversations created (the large tables) are read from the per-day counters
// that triggers keep in `analytics_daily_counts` (at most days x metrics rows: a 90-day rollup of a
// million messages no longer counts a million rows); the rest are aggregates grouped by UTC day
// over each table's indexed (tenant_id, <date column>) range.
//
// Raw SQL is the one place the tenant-scoped client cannot add the tenant filter itself, so every
// table reference below carries `tenant_id = ${tenant}` as a bound parameter, visibly.
import { Prisma } from "../db/generated/client";
import { modelColumnsSql, TABLE_SQL } from "../db/sql-columns";
import type { TenantDb } from "../db/tenant-scope";
import { CHANNELS } from "../lib/conversation-channels";
import { DEFAULT_ROLLUP_DAYS, type AnalyticsCounts, type AnalyticsDay, type WeeklyRollup } from "./analytics.types";

const DAY_MS = 86_400_000;

/** The period: the `days` UTC calendar days ending with today (today is partial). */
function rollupPeriod(days: number, now: Date) {
  const endExclusive = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + DAY_MS;
  const start = new Date(endExclusive - days * DAY_MS);
  return { start, end: new Date(endExclusive) };
}

type DayRow = {
  date: string;
  handoffs: number;
  closed: number;
  leads_created: number;
  leads_created_converted: number;
  leads_qualified: number;
  leads_converted: number;
  appointments_booked: number;
  appointments_cancelled: number;
  appointments_completed: number;
  messages_inbound: number;
  messages_outbound: number;
  csat_responses: number;
  csat_score_sum: number;
} & Record<`channel_${(typeof CHANNELS)[number]}`, number>;

// Column names come from the model (server/db/sql-columns.ts).
const CONVERSATION = modelColumnsSql(Prisma.ConversationScalarFieldEnum);
const LEAD = modelColumnsSql(Prisma.LeadScalarFieldEnum);
const APPOINTMENT = modelColumnsSql(Prisma.AppointmentScalarFieldEnum);
const CSAT = modelColumnsSql(Prisma.CsatResponseScalarFieldEnum);
const DAILY_COUNT = modelColumnsSql(Prisma.AnalyticsDailyCountScalarFieldEnum);

/**
 * `(day, metric, n)` rows: one table's rows counted (or `aggregate`d) per UTC day of its `dateField`
 * column, within the period and the tenant.
 */
function perDay<DateField extends string>(
  metric: string,
  table: Prisma.Sql,
  columns: Readonly<Record<DateField | "tenantId", Prisma.Sql>>,
  dateField: DateField,
  [tenantId, start, end]: readonly [string, Date, Date],
  extraWhere = Prisma.empty,
  aggregate = Prisma.sql`count(*)`,
) {
  const col = Prisma.sql`"${columns[dateField]}"`;
  return Prisma.sql`
    SELECT date_trunc('day', ${col} AT TIME ZONE 'UTC') AS day, ${metric} AS metric, ${aggregate} AS n
    FROM ${table}
    WHERE ${columns.tenantId} = ${tenantId}::uuid
      AND ${col} >= ${start.toISOString()}::timestamptz AND ${col} < ${end.toISOString()}::timestamptz
      ${extraWhere}
    GROUP BY 1`;
}

/** Output columns: [column name, metric]. Conversation channels come from the counters table. */
const METRIC_COLUMNS: [keyof DayRow, string][] = [
  ["handoffs", "handoffs"],
  ["closed", "closed"],
  ["leads_created", "leads_created"],
  ["leads_created_converted", "leads_created_converted"],
  ["leads_qualified", "leads_qualified"],
  ["leads_converted", "leads_converted"],
  ["appointments_booked", "appointments_booked"],
  ["appointments_cancelled", "appointments_cancelled"],
  ["appointments_completed", "appointments_completed"],
  ["messages_inbound", "messages.inbound"],
  ["messages_outbound", "messages.outbound"],
  ["csat_responses", "csat_responses"],
  ["csat_score_sum", "csat_score_sum"],
  ...CHANNELS.map((c): [keyof DayRow, string] => [`channel_${c}`, `conversations.${c}`]),
];

// Every source yields (day, metric, n) rows, unioned and pivoted once per day. (One LEFT JOIN per
// source instead made the planner's row estimates explode and JIT-compile for a second.)
function rollupQuery(tenantId: string, start: Date, end: Date): Prisma.Sql {
  const range = [tenantId, start, end] as const;
  const sum = (metric: string) => Prisma.sql`coalesce(sum(c.n) FILTER (WHERE c.metric = ${metric}), 0)::int`;
  const columns = Prisma.join(METRIC_COLUMNS.map(([column, metric]) => Prisma.sql`${sum(metric)} AS ${Prisma.raw(`"${column}"`)}`));
  return Prisma.sql`
    WITH days AS (
      SELECT generate_series(
        ${start.toISOString()}::timestamptz AT TIME ZONE 'UTC',
        ${end.toISOString()}::timestamptz AT TIME ZONE 'UTC' - interval '1 day',
        interval '1 day') AS day
    ),
    counts AS (
      -- messages per direction and conversations per channel: the trigger-kept counters (a day's
      -- shards, one per database connection that counted, are summed by the pivot below)
      SELECT ${DAILY_COUNT.day}::timestamp AS day, ${DAILY_COUNT.metric} AS metric, ${DAILY_COUNT.count}::bigint AS n
      FROM ${TABLE_SQL.AnalyticsDailyCount}
      WHERE ${DAILY_COUNT.tenantId} = ${tenantId}::uuid
        AND ${DAILY_COUNT.day} >= (${start.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date
        AND ${DAILY_COUNT.day} < (${end.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date
      -- closed_at is set only while a conversation is closed (reopening clears it): no status test,
      -- so the (tenant_id, closed_at) index answers alone
      UNION ALL ${perDay("closed", TABLE_SQL.Conversation, CONVERSATION, "closedAt", range)}
      UNION ALL ${perDay("handoffs", TABLE_SQL.Lead, LEAD, "handoffRequestedAt", range)}
      UNION ALL ${perDay("leads_created", TABLE_SQL.Lead, LEAD, "createdAt", range)}
      UNION ALL ${perDay("leads_created_converted", TABLE_SQL.Lead, LEAD, "createdAt", range, Prisma.sql`AND ${LEAD.status} = 'converted'`)}
      UNION ALL ${perDay("leads_qualified", TABLE_SQL.Lead, LEAD, "qualifiedAt", range)}
      UNION ALL ${perDay("leads_converted", TABLE_SQL.Lead, LEAD, "convertedAt", range, Prisma.sql`AND ${LEAD.status} = 'converted'`)}
      UNION ALL ${perDay("appointments_booked", TABLE_SQL.Appointment, APPOINTMENT, "createdAt", range)}
      UNION ALL ${perDay("appointments_cancelled", TABLE_SQL.Appointment, APPOINTMENT, "updatedAt", range, Prisma.sql`AND ${APPOINTMENT.status} = 'cancelled'`)}
      UNION ALL ${perDay("appointments_completed", TABLE_SQL.Appointment, APPOINTMENT, "updatedAt", range, Prisma.sql`AND ${APPOINTMENT.status} = 'completed'`)}
      UNION ALL ${perDay("csat_responses", TABLE_SQL.CsatResponse, CSAT, "createdAt", range)}
      UNION ALL ${perDay("csat_score_sum", TABLE_SQL.CsatResponse, CSAT, "createdAt", range, Prisma.empty, Prisma.sql`sum(${CSAT.score})`)}
    )
    SELECT to_char(d.day, 'YYYY-MM-DD') AS date, ${columns}
    FROM days d
    LEFT JOIN counts c ON c.day = d.day
    GROUP BY d.day
    ORDER BY d.day`;
}

/** Mean of the scores, 2 decimals; null without responses. */
const averageScore = (sum: number, responses: number) => (responses === 0 ? null : Math.round((sum / responses) * 100) / 100);

/** Share of a cohort that converted, 4 decimals; null for an empty cohort. */
const conversionRate = (converted: number, created: number) => (created === 0 ? null : Math.round((converted / created) * 10_000) / 10_000);

function toCounts(row: DayRow): AnalyticsCounts {
  return {
    conversations: {
      total: CHANNELS.reduce((total, c) => total + row[`channel_${c}`], 0),
      by_channel: Object.fromEntries(CHANNELS.map((c) => [c, row[`channel_${c}`]])) as AnalyticsCounts["conversations"]["by_channel"],
      handoffs: row.handoffs,
      closed: row.closed,
    },
    leads: {
      created: row.leads_created,
      qualified: row.leads_qualified,
      converted: row.leads_converted,
      conversion_rate: conversionRate(row.leads_created_converted, row.leads_created),
    },
    appointments: {
      booked: row.appointments_booked,
      cancelled: row.appointments_cancelled,
      completed: row.appointments_completed,
    },
    messages: { inbound: row.messages_inbound, outbound: row.messages_outbound },
    csat: { responses: row.csat_responses, average_score: averageScore(row.csat_score_sum, row.csat_responses) },
  };
}

function sumRows(rows: DayRow[]): DayRow {
  const total = {} as Record<string, number | string>;
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      if (typeof value === "number") total[key] = ((total[key] as number | undefined) ?? 0) + value;
    }
  }
  return total as DayRow;
}

export async function weeklyRollup(db: TenantDb, input: { days?: number }, now: Date = new Date()): Promise<WeeklyRollup> {
  const days = input.days ?? DEFAULT_ROLLUP_DAYS;
  const { start, end } = rollupPeriod(days, now);
  const rows = await db.$queryRaw<DayRow[]>(rollupQuery(db.tenantId, start, end));
  const daily: AnalyticsDay[] = rows.map((row) => ({ date: row.date, ...toCounts(row) }));
  return {
    days,
    start_date: daily[0].date,
    end_date: daily[daily.length - 1].date,
    totals: toCounts(sumRows(rows)),
    daily,
  };
}

/**
 * The same counts over the `days` UTC days just before the rollup's period (for "vs previous
 * period" on the dashboard). Whole days, so the comparison is with complete days while the current
 * period's last day (today) is still partial.
 */
export async function previousPeriodTotals(db: TenantDb, input: { days?: number }, now: Date = new Date()) {
  const days = input.days ?? DEFAULT_ROLLUP_DAYS;
  const current = rollupPeriod(days, now);
  const start = new Date(current.start.getTime() - days * DAY_MS);
  const rows = await db.$queryRaw<DayRow[]>(rollupQuery(db.tenantId, start, current.start));
  return { days, start_date: rows[0].date, end_date: rows[rows.length - 1].date, totals: toCounts(sumRows(rows)) };
}
