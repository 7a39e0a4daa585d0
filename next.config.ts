import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native/wasm database drivers stay plain Node modules instead of being bundled.
  serverExternalPackages: ["@electric-sql/pglite", "pglite-prisma-adapter", "@prisma/schema-engine-wasm", "pg", "postgres", "@prisma/adapter-pg", "ioredis"],
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
