// The CRM providers, apart from the drivers: the dashboard's forms import this (no server-only code).
export const CRM_PROVIDERS = ["http", "hubspot"] as const;
export type CrmProvider = (typeof CRM_PROVIDERS)[number];
