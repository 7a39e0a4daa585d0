import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "CRM · Integrations" };
export default PassThrough;
