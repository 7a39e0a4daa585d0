import { PassThrough } from "../../../_ui/passthrough-layout";

export const metadata = { title: "Webhook endpoint · Integrations" };
export default PassThrough;
