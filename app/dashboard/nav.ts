// The dashboard's navigation, in the specification's words: Analytics; the assistant; and Settings,
// holding Integrations (API keys, webhooks, channels, the CRM), Members, the audit log, Privacy and Data retention. URL
// paths stay as they were; the labels and grouping are what a person sees (sidebar, breadcrumb, title).
import { Archive, BarChart3, Bot, Building2, KeyRound, MessageSquare, ScrollText, ShieldCheck, Users, Webhook, type LucideIcon } from "lucide-react";

type NavItem = { href: string; label: string; icon: LucideIcon; trail: string[] };
export type NavGroup = { label: string | null; items: NavItem[] };

const SETTINGS = "Settings";
const INTEGRATIONS = "Integrations";

export const NAV_GROUPS: NavGroup[] = [
  {
    label: null,
    items: [
      { href: "/dashboard/analytics", label: "Analytics", icon: BarChart3, trail: [] },
      { href: "/dashboard/assistant", label: "Assistant", icon: Bot, trail: [] },
    ],
  },
  {
    label: `${SETTINGS} › ${INTEGRATIONS}`,
    items: [
      { href: "/dashboard/api-keys", label: "API keys", icon: KeyRound, trail: [SETTINGS, INTEGRATIONS] },
      { href: "/dashboard/webhooks", label: "Webhooks", icon: Webhook, trail: [SETTINGS, INTEGRATIONS] },
      { href: "/dashboard/channels", label: "Channels", icon: MessageSquare, trail: [SETTINGS, INTEGRATIONS] },
      { href: "/dashboard/crm", label: "CRM", icon: Building2, trail: [SETTINGS, INTEGRATIONS] },
    ],
  },
  {
    label: SETTINGS,
    items: [
      { href: "/dashboard/members", label: "Members", icon: Users, trail: [SETTINGS] },
      { href: "/dashboard/audit-log", label: "Audit log", icon: ScrollText, trail: [SETTINGS] },
      { href: "/dashboard/privacy", label: "Privacy", icon: ShieldCheck, trail: [SETTINGS] },
      { href: "/dashboard/retention", label: "Data retention", icon: Archive, trail: [SETTINGS] },
    ],
  },
];

const NAV_ITEMS = NAV_GROUPS.flatMap((g) => g.items);

export const activeItem = (pathname: string | null) => NAV_ITEMS.find((i) => pathname === i.href || pathname?.startsWith(`${i.href}/`)) ?? null;
