import Link from "next/link";

export const metadata = { title: "Page not found" };

export default function NotFound() {
  return (
    <main className="flex min-h-dvh items-center justify-center bg-slate-50 px-4">
      <div className="max-w-md text-center">
        <p className="text-sm font-semibold text-indigo-700">404</p>
        <h1 className="mt-2 text-2xl font-semibold tracking-tight text-slate-900">This page does not exist</h1>
        <p className="mt-2 text-sm text-slate-700">The address may be mistyped, or the page has moved.</p>
        <nav aria-label="Ways back" className="mt-6 flex flex-wrap justify-center gap-3">
          <Link href="/dashboard" className="rounded-md bg-indigo-600 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-500">
            Go to the dashboard
          </Link>
          <Link href="/sign-in" className="rounded-md border border-slate-300 bg-white px-4 py-2 text-sm font-medium text-slate-800 hover:bg-slate-50">
            Sign in
          </Link>
          <Link href="/api/v1/docs" className="rounded-md px-4 py-2 text-sm font-medium text-indigo-700 underline-offset-4 hover:underline">
            API reference
          </Link>
        </nav>
      </div>
    </main>
  );
}
