// `import "#server-only"` marks a module as server-only (its log, settings, database, secrets).
// On the server (Node, tsx, vitest, Next's server and SSR builds) "#server-only" is this empty
// module. In a browser bundle the `browser` condition of package.json's "imports" picks
// browser.js instead, which imports Next's `server-only` guard: the build then fails, naming the
// client component that reached a server-only module. The same guard as the `server-only`
// package, without a dependency: Next aliases that name itself.
export {};
