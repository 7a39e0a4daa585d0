"use client";
// The dashboard's tRPC client: the same routers as /api/v1, through /api/trpc with the session cookie.
import { useState, type ReactNode } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "@/server/http/router";
import { sentenceCase } from "./format";

const trpcContext = createTRPCContext<AppRouter>();
const { TRPCProvider } = trpcContext;
export const { useTRPC, useTRPCClient } = trpcContext;

function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // Auth and permission failures do not get better by retrying.
        retry: (count, err) => count < 2 && !(err instanceof TRPCClientError && [401, 403, 404].includes(err.data?.httpStatus)),
      },
    },
  });
}

export function TrpcProviders({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(() => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "/api/trpc" })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

/** What the server said about an error: its message, the field it names, and its wire code. */
export function describeError(err: unknown): { message: string; field: string | null; code: string | null; status: number | null } {
  if (err instanceof TRPCClientError) {
    const data = err.data as { field?: string | null; appCode?: string; httpStatus?: number } | undefined;
    return { message: sentenceCase(err.message), field: data?.field ?? null, code: data?.appCode ?? null, status: data?.httpStatus ?? null };
  }
  return { message: sentenceCase(err instanceof Error ? err.message : "something went wrong"), field: null, code: null, status: null };
}
