"use client";
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { describeError, useTRPC } from "../../_lib/trpc";
import { Card, EmptyState, ErrorState, LoadingState, PageHeader } from "../../_ui/surface";
import { cn } from "../../_ui/cn";

const RANGES = [7, 14, 30, 90] as const;

function Stat({ label, value }: { label: string; value: string | number }) {
  return (
    <Card className="p-4">
      <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</p>
      <p className="mt-1 text-2xl font-semibold text-slate-900">{value}</p>
    </Card>
  );
}

export default function AnalyticsPage() {
  const trpc = useTRPC();
  const [days, setDays] = useState<number>(7);
  const rollup = useQuery({ ...trpc.analytics.weeklyRollup.queryOptions({ days }), placeholderData: keepPreviousData });
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
  const empty = data && data.totals.conversations.total + data.totals.leads.created + data.totals.appointments.booked + data.totals.messages.inbound + data.totals.messages.outbound === 0;

  return (
    <>
      <PageHeader
        title="Analytics"
        description="Activity per UTC day: conversations, leads, appointments and messages."
        actions={
          <div role="group" aria-label="Day range" className="inline-flex rounded-md border border-slate-300 bg-white p-0.5 shadow-sm">
            {RANGES.map((r) => (
              <button type="button" key={r} aria-pressed={days === r} onClick={() => setDays(r)} className={cn("rounded px-3 py-1.5 text-sm font-medium", days === r ? "bg-indigo-600 text-white" : "text-slate-700 hover:bg-slate-100")}>
                {r} days
              </button>
            ))}
          </div>
        }
      />
      {rollup.isPending ? (
        <Card><LoadingState /></Card>
      ) : rollup.error ? (
        <Card><ErrorState message={describeError(rollup.error).message} onRetry={() => rollup.refetch()} /></Card>
      ) : (
        <div className={cn("space-y-6", rollup.isFetching && "opacity-70")}>
          <div className="grid grid-cols-2 gap-3 md:grid-cols-4">
            <Stat label="Conversations" value={data!.totals.conversations.total} />
            <Stat label="Leads" value={data!.totals.leads.created} />
            <Stat label="Booked" value={data!.totals.appointments.booked} />
            <Stat label="Conversion" value={data!.totals.leads.conversion_rate === null ? "—" : `${(data!.totals.leads.conversion_rate * 100).toFixed(1)}%`} />
          </div>
          {empty ? (
            <Card><EmptyState title="No activity in this range">Conversations, leads and bookings from the assistant or the API will show up here. Try a longer range.</EmptyState></Card>
          ) : null}
          <div className="grid gap-6 lg:grid-cols-2">
            <Card className="p-4">
              <h2 className="mb-3 text-sm font-semibold text-slate-900">Conversations and leads</h2>
              <div className="h-64">
                <ResponsiveContainer width="100%" height="100%">
                  <LineChart data={daily}>
                    <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
                    <XAxis dataKey="date" fontSize={12} />
                    <YAxis allowDecimals={false} fontSize={12} width={32} />
                    <Tooltip />
                    <Legend />
                    <Line type="monotone" dataKey="conversations" stroke="#4f46e5" strokeWidth={2} dot={false} isAnimationActive={false} />
                    <Line type="monotone" dataKey="leads" stroke="#0891b2" strokeWidth={2} dot={false} isAnimationActive={false} />
                    <Line type="monotone" dataKey="qualified" stroke="#16a34a" strokeWidth={2} dot={false} isAnimationActive={false} />
                  </LineChart>
                </ResponsiveContainer>
              </div>
            </Card>
            <Card className="p-4">
              <h2 className="mb-3 text-sm font-semibold text-slate-900">Messages and bookings</h2>
              <div className="h-64">
                <ResponsiveContainer width="100%" height="100%">
                  <BarChart data={daily}>
                    <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
                    <XAxis dataKey="date" fontSize={12} />
                    <YAxis allowDecimals={false} fontSize={12} width={32} />
                    <Tooltip />
                    <Legend />
                    <Bar dataKey="inbound" fill="#6366f1" isAnimationActive={false} />
                    <Bar dataKey="outbound" fill="#a5b4fc" isAnimationActive={false} />
                    <Bar dataKey="booked" fill="#16a34a" isAnimationActive={false} />
                  </BarChart>
                </ResponsiveContainer>
              </div>
            </Card>
          </div>
        </div>
      )}
    </>
  );
}
