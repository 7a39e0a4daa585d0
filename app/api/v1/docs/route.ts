// Interactive API reference over the served OpenAPI document.
import { ApiReference } from "@scalar/nextjs-api-reference";

export const GET = ApiReference({ url: "/api/v1/openapi.json", pageTitle: "Tenant Data API reference" });
