// The application router: every domain's procedures, served to the dashboard at /api/trpc and,
// for those with `openapi` meta, as the REST contract at /api/v1.
import { router } from "./trpc";
import { offeringsRouter } from "./offerings/offerings.router";
import { appointmentsRouter } from "./appointments/appointments.router";

export const appRouter = router({
  offerings: offeringsRouter,
  appointments: appointmentsRouter,
});

export type AppRouter = typeof appRouter;
