import type { CrmDriver, CrmProvider } from "./driver";
import { httpDriver } from "./http";
import { hubspotDriver } from "./hubspot";

export const CRM_DRIVERS: Record<CrmProvider, CrmDriver> = { http: httpDriver, hubspot: hubspotDriver };
export * from "./driver";
