import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native/wasm database drivers stay plain Node modules instead of being bundled.
  serverExternalPackages: ["@electric-sql/pglite", "pglite-prisma-adapter", "@prisma/schema-engine-wasm", "pg", "postgres", "@prisma/adapter-pg", "ioredis"],
  poweredByHeader: false,
  // A second build beside the main one (a developer's or a test run's), e.g. NEXT_DIST_DIR=.next-b.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
