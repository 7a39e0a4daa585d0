"use client";
import { useState, type ReactNode } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { describeError, useTRPC } from "../../_lib/trpc";
import { Card, EmptyState, ErrorState, LoadingState, PageHeader, Table } from "../../_ui/surface";
import { cn } from "../../_ui/cn";
import type { RouterOutputs } from "../../_lib/router-types";

const RANGES = [7, 14, 30, 90] as const;

// Series colours, each at least 4.5:1 against white (text-level contrast, above the 3:1 graphics need).
const COLOURS = {
  conversations: "#4338ca", // indigo-700, 7.9:1
  leads: "#0e7490", // cyan-700, 5.4:1
  qualified: "#7e22ce", // purple-700, 7.4:1
  booked: "#047857", // emerald-700, 5.5:1
  inbound: "#1d4ed8", // blue-700, 6.7:1
  outbound: "#b45309", // amber-700, 5.0:1
};

/** The counts of a period, as the router sends them (the previous period's totals have the same shape). */
type Counts = RouterOutputs["analytics"]["weeklyRollup"]["totals"];

const CHANNEL_LABELS: Record<string, string> = { voice: "Phone calls", sms: "SMS", whatsapp: "WhatsApp", webchat: "Web chat", email: "Email" };

/** "+3 (+50%) vs previous 7 days", in words a screen reader says well too. */
function Change({
  now,
  before,
  days,
  format = (n: number) => String(n),
}: {
  now: number | null;
  before: number | null;
  days: number;
  format?: (n: number) => string;
}) {
  const span = `the previous ${days} ${days === 1 ? "day" : "days"}`;
  if (now === null || before === null)
    return (
      <p className="mt-1 text-xs text-slate-600" data-testid="change">
        No comparison: nothing to compare in {span}
      </p>
    );
  const delta = now - before;
  const percent = before === 0 ? null : Math.round((delta / before) * 100);
  const tone = delta > 0 ? "text-emerald-800" : delta < 0 ? "text-red-700" : "text-slate-600";
  const arrow = delta > 0 ? "▲" : delta < 0 ? "▼" : "";
  const amount =
    delta === 0
      ? "No change"
      : `${delta > 0 ? "+" : "−"}${format(Math.abs(delta))}${percent === null ? "" : ` (${delta > 0 ? "+" : "−"}${Math.abs(percent)}%)`}`;
  return (
    <p className={cn("mt-1 text-xs font-medium", tone)} data-testid="change">
      <span aria-hidden>{arrow} </span>
      {amount}{" "}
      <span className="font-normal text-slate-600">
        vs {span} ({format(before)})
      </span>
    </p>
  );
}

function Stat(props: { label: string; value: string; definition: ReactNode; change: ReactNode; testId: string }) {
  return (
    <Card className="flex flex-col p-4" data-testid={props.testId}>
      <h2 className="text-xs font-semibold uppercase tracking-wide text-slate-600">{props.label}</h2>
      <p className="mt-1 text-2xl font-semibold text-slate-900" data-testid="value">
        {props.value}
      </p>
      {props.change}
      <p className="mt-2 text-xs text-slate-600" data-testid="definition">
        {props.definition}
      </p>
    </Card>
  );
}

const percent = (rate: number | null) => (rate === null ? "—" : `${(rate * 100).toFixed(1)}%`);

function StatCards({ totals, previous, days }: { totals: Counts; previous: Counts | null; days: number }) {
  const cohortConverted = totals.leads.conversion_rate === null ? 0 : Math.round(totals.leads.conversion_rate * totals.leads.created);
  return (
    <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 xl:grid-cols-5">
      <Stat
        testId="stat-conversations"
        label="Conversations"
        value={String(totals.conversations.total)}
        definition="Conversations started in the period, on every channel (by the day they started)."
        change={<Change now={totals.conversations.total} before={previous?.conversations.total ?? null} days={days} />}
      />
      <Stat
        testId="stat-leads"
        label="Leads"
        value={String(totals.leads.created)}
        definition="Leads created in the period (a person the assistant captured contact details for)."
        change={<Change now={totals.leads.created} before={previous?.leads.created ?? null} days={days} />}
      />
      <Stat
        testId="stat-booked"
        label="Appointments booked"
        value={String(totals.appointments.booked)}
        definition="Appointments created in the period, whatever happened to them afterwards."
        change={<Change now={totals.appointments.booked} before={previous?.appointments.booked ?? null} days={days} />}
      />
      <Stat
        testId="stat-conversion"
        label="Lead conversion"
        value={percent(totals.leads.conversion_rate)}
        definition={
          totals.leads.created === 0
            ? "Of the leads created in the period, the share whose status is now “converted”. No leads were created, so there is no rate."
            : `Of the ${totals.leads.created} ${totals.leads.created === 1 ? "lead" : "leads"} created in the period, the share whose status is now “converted” (${cohortConverted} of ${totals.leads.created}). Bookings are counted separately.`
        }
        change={
          <Change
            now={totals.leads.conversion_rate === null ? null : Math.round(totals.leads.conversion_rate * 1000) / 10}
            before={previous?.leads.conversion_rate == null ? null : Math.round(previous.leads.conversion_rate * 1000) / 10}
            days={days}
            format={(n) => `${n.toFixed(1)} pt`}
          />
        }
      />
      <Stat
        testId="stat-csat"
        label="Customer satisfaction"
        value={totals.csat.average_score === null ? "—" : `${totals.csat.average_score.toFixed(2)} / 5`}
        definition={`Mean score customers gave when asked at the end of a conversation (1 = poor, 5 = excellent), from ${totals.csat.responses} ${totals.csat.responses === 1 ? "answer" : "answers"}.`}
        change={<Change now={totals.csat.average_score} before={previous?.csat.average_score ?? null} days={days} format={(n) => n.toFixed(2)} />}
      />
    </div>
  );
}

function DailyBars({
  title,
  description,
  data,
  series,
}: {
  title: string;
  description: string;
  data: Record<string, number | string>[];
  series: (keyof typeof COLOURS)[];
}) {
  return (
    <Card className="p-4">
      <h2 className="text-sm font-semibold text-slate-900">{title}</h2>
      <p className="mb-3 text-xs text-slate-600">{description}</p>
      <div className="h-64" role="img" aria-label={`${title}: bar chart per day; the same numbers are in the table below the charts`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={data} accessibilityLayer={false}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
            <XAxis dataKey="date" fontSize={12} tick={{ fill: "#475569" }} />
            <YAxis allowDecimals={false} fontSize={12} width={32} tick={{ fill: "#475569" }} />
            <Tooltip />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            {series.map((s) => (
              <Bar key={s} dataKey={s} fill={COLOURS[s]} isAnimationActive={false} />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
    </Card>
  );
}

function ChannelBreakdown({ byChannel, previous, days }: { byChannel: Record<string, number>; previous: Record<string, number> | null; days: number }) {
  const total = Object.values(byChannel).reduce((a, b) => a + b, 0);
  return (
    <Card>
      <div className="px-4 pt-4">
        <h2 className="text-sm font-semibold text-slate-900">Conversations by channel</h2>
        <p className="text-xs text-slate-600">Where conversations started in the period, and the share of all of them.</p>
      </div>
      <Table columns={["Channel", "Conversations", "Share", `Previous ${days} days`]}>
        {Object.entries(byChannel).map(([channel, n]) => (
          <tr key={channel} data-testid="channel-row">
            <td className="font-medium text-slate-900">{CHANNEL_LABELS[channel] ?? channel}</td>
            <td className="tabular-nums">{n}</td>
            <td>
              <div className="flex items-center gap-2">
                <span className="h-2 w-24 overflow-hidden rounded bg-slate-100" aria-hidden>
                  <span className="block h-full bg-indigo-700" style={{ width: `${total ? (n / total) * 100 : 0}%` }} />
                </span>
                <span className="tabular-nums text-slate-700">{total ? `${Math.round((n / total) * 100)}%` : "—"}</span>
              </div>
            </td>
            <td className="tabular-nums text-slate-700">{previous ? (previous[channel] ?? 0) : "—"}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

export default function AnalyticsPage() {
  const trpc = useTRPC();
  const [days, setDays] = useState<number>(7);
  const rollup = useQuery({ ...trpc.analytics.weeklyRollup.queryOptions({ days }), placeholderData: keepPreviousData });
  const previous = useQuery({ ...trpc.analytics.previousPeriod.queryOptions({ days }), placeholderData: keepPreviousData });
  const data = rollup.data;
  const daily = data?.daily.map((d) => ({
    date: d.date.slice(5),
    conversations: d.conversations.total,
    leads: d.leads.created,
    qualified: d.leads.qualified,
    booked: d.appointments.booked,
    inbound: d.messages.inbound,
    outbound: d.messages.outbound,
  }));
  const empty =
    data &&
    data.totals.conversations.total +
      data.totals.leads.created +
      data.totals.appointments.booked +
      data.totals.messages.inbound +
      data.totals.messages.outbound ===
      0;
  const prev = previous.data?.days === days ? previous.data.totals : null;

  return (
    <>
      <PageHeader
        title="Analytics"
        description={`What the assistant did over the last ${days} days (UTC days ending today, so today is still counting), compared with the ${days} days before.`}
        actions={
          <div role="group" aria-label="Day range" className="inline-flex rounded-md border border-slate-300 bg-white p-0.5 shadow-sm">
            {RANGES.map((r) => (
              <button
                type="button"
                key={r}
                aria-pressed={days === r}
                onClick={() => setDays(r)}
                className={cn("rounded px-3 py-1.5 text-sm font-medium", days === r ? "bg-indigo-600 text-white" : "text-slate-700 hover:bg-slate-100")}
              >
                {r} days
              </button>
            ))}
          </div>
        }
      />
      {rollup.isPending ? (
        <Card>
          <LoadingState />
        </Card>
      ) : rollup.error ? (
        <Card>
          <ErrorState message={describeError(rollup.error).message} onRetry={() => rollup.refetch()} />
        </Card>
      ) : (
        <div className={cn("space-y-6", rollup.isFetching && "opacity-70")}>
          <StatCards totals={data!.totals} previous={prev} days={days} />
          {empty ? (
            <Card>
              <EmptyState title="No activity in this range">
                Conversations, leads and bookings from the assistant or the API will show up here. Try a longer range.
              </EmptyState>
            </Card>
          ) : null}
          <div className="grid gap-6 lg:grid-cols-2">
            <DailyBars
              title="Conversations and leads"
              description="Per day: conversations started, leads created, leads qualified (first moved past “new”)."
              data={daily!}
              series={["conversations", "leads", "qualified"]}
            />
            <DailyBars
              title="Messages and bookings"
              description="Per day: messages received (inbound) and sent (outbound), appointments booked."
              data={daily!}
              series={["inbound", "outbound", "booked"]}
            />
          </div>
          <ChannelBreakdown byChannel={data!.totals.conversations.by_channel} previous={prev?.conversations.by_channel ?? null} days={days} />
          <details className="rounded-xl border border-slate-200 bg-white shadow-sm">
            <summary className="cursor-pointer px-4 py-3 text-sm font-semibold text-slate-900">The numbers per day</summary>
            <Table columns={["Day", "Conversations", "Leads", "Qualified", "Booked", "Inbound", "Outbound"]}>
              {data!.daily.map((d) => (
                <tr key={d.date}>
                  <td>{d.date}</td>
                  <td>{d.conversations.total}</td>
                  <td>{d.leads.created}</td>
                  <td>{d.leads.qualified}</td>
                  <td>{d.appointments.booked}</td>
                  <td>{d.messages.inbound}</td>
                  <td>{d.messages.outbound}</td>
                </tr>
              ))}
            </Table>
          </details>
        </div>
      )}
    </>
  );
}
