// Dashboard sign-in: better-auth (email + password) over the project's Prisma client, with the
// organization plugin (an organization is a `Tenant`). Tables live in prisma/schema.prisma
// (better-auth's CLI needs Node 22); Prisma maps its camelCase fields to the snake_case columns.
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { organization } from "better-auth/plugins/organization";
import { dataDir, getDb } from "../db/client";
import { authIpOptions, trustedOriginsFor } from "./request-origin";
import { refuseOrganizationChanges } from "./organization-endpoints";
import { INVITATION_TTL_SECONDS } from "./invitations";
import { setting } from "../lib/settings";
import { log, requestIdOf, withRequestLogger } from "../lib/log";
import { traceRequest } from "../observability/tracing";

/**
 * The signing secret: BETTER_AUTH_SECRET, or (embedded / local runs) one generated once and kept
 * beside the data so sessions survive restarts.
 */
function authSecret(): string {
  const configured = setting("BETTER_AUTH_SECRET");
  if (configured) return configured;
  const file = path.join(dataDir(), "auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir(), { recursive: true });
  const secret = randomBytes(32).toString("hex");
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** Sign-in attempts per client address and window (better-auth's own limiter, stored in the DB). */
export const SIGN_IN_LIMIT = {
  window: setting("AUTH_SIGNIN_RATE_WINDOW_SECONDS"),
  max: setting("AUTH_SIGNIN_RATE_MAX"),
};

async function createAuth() {
  const prisma = await getDb();
  return betterAuth({
    appName: "Tenant data platform",
    baseURL: setting("BETTER_AUTH_URL"),
    secret: authSecret(),
    database: prismaAdapter(prisma, { provider: "postgresql" }),
    // Users are created by the operator CLI (and invitations), never by public sign-up.
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    trustedOrigins: (request) => trustedOriginsFor(request?.headers),
    rateLimit: {
      enabled: true,
      storage: "database",
      modelName: "rateLimit",
      // Reading one's own session (every dashboard page does, on load and on focus) is not counted:
      // at better-auth's 100 a minute per address, everyone behind one office address was shown the
      // sign-in page once they had opened enough pages together.
      customRules: { "/sign-in/email": SIGN_IN_LIMIT, "/get-session": false },
    },
    advanced: {
      ipAddress: authIpOptions(),
      // Tenants have uuid ids; one generator for every better-auth table keeps it simple.
      database: { generateId: () => randomUUID() },
      cookiePrefix: "tdp",
    },
    // Its lines (a refused sign-in: "Invalid password") in the platform's format, with the request's
    // id; only the message and an error, never the other arguments (they may hold what was sent).
    logger: {
      level: "info",
      log: (level, message, ...args) => {
        // Without BETTER_AUTH_URL the origin comes from each request on purpose (see request-origin.ts):
        // what better-auth warns about is this platform's documented default, so it is no warning here.
        if (level === "warn" && message.includes("Base URL is not set") && !setting("BETTER_AUTH_URL")) {
          log.info({ source: "better-auth" }, "dashboard origin taken from each request (BETTER_AUTH_URL unset)");
          return;
        }
        const error = args.find((arg) => arg instanceof Error);
        const fields = error ? { source: "better-auth", error } : { source: "better-auth" };
        if (level === "error") log.error(fields, message);
        else if (level === "warn") log.warn(fields, message);
        else if (level === "info") log.info(fields, message);
      },
    },
    // Tenants, members and roles change only through the platform's audited procedures.
    hooks: { before: refuseOrganizationChanges },
    databaseHooks: {
      session: {
        create: {
          // better-auth starts a session with no active organization: pick the user's first tenant.
          before: async (session) => {
            const membership = await prisma.member.findFirst({
              where: { userId: session.userId },
              orderBy: [{ createdAt: "asc" }, { id: "asc" }],
              select: { organizationId: true },
            });
            return { data: { ...session, activeOrganizationId: membership?.organizationId ?? null } };
          },
        },
      },
    },
    plugins: [
      organization({
        schema: { organization: { modelName: "tenant" } },
        // Tenants are provisioned by operators (CLI), not created from the dashboard.
        allowUserToCreateOrganization: false,
        // Invitations are issued and accepted by the dashboard's procedures (server/dashboard/invitations.ts).
        invitationExpiresIn: INVITATION_TTL_SECONDS,
      }),
    ],
  });
}

export type Auth = Awaited<ReturnType<typeof createAuth>>;
let auth: Promise<Auth> | undefined;

/** The process's better-auth instance (built once, after the database is open). */
export function getAuth(): Promise<Auth> {
  auth ??= createAuth().catch((err) => {
    auth = undefined;
    throw err;
  });
  return auth;
}

/** The span route of every /api/auth request (better-auth's paths are not a fixed set a client cannot add to). */
const AUTH_ROUTE = "/api/auth/{action}";

/** better-auth's endpoints (sign-in, sign-out, session) at /api/auth/*: the one handler both fronts mount. */
export async function answerAuthRequest(req: Request): Promise<Response> {
  // Every line logged while it runs carries its request id (server/lib/log.ts), echoed as on the API.
  const requestId = requestIdOf(req.headers);
  const res = await traceRequest(
    { method: req.method, target: req.url, headers: req.headers },
    AUTH_ROUTE,
    requestId,
    () => withRequestLogger(requestId, async () => (await getAuth()).handler(req)),
    (answer) => ({ status: answer.status, route: AUTH_ROUTE }),
  );
  const answer = new Response(res.body, res); // its own headers: a redirect's are immutable
  answer.headers.set("x-request-id", requestId);
  return answer;
}
