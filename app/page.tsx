export default function Home() {
  return (
    <main className="mx-auto max-w-2xl p-8 font-sans">
      <h1 className="text-2xl font-semibold">Tenant data platform</h1>
      <p className="mt-2 text-slate-600">
        The REST API lives under <code>/api/v1</code>.
      </p>
      <ul className="mt-4 list-disc pl-6">
        <li>
          <a className="text-blue-700 underline" href="/dashboard">
            Dashboard
          </a>{" "}
          (sign in)
        </li>
        <li>
          <a className="text-blue-700 underline" href="/api/v1/docs">
            API reference
          </a>
        </li>
        <li>
          <a className="text-blue-700 underline" href="/api/v1/openapi.json">
            OpenAPI document
          </a>
        </li>
      </ul>
    </main>
  );
}
