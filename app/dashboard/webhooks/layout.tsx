import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Webhooks · Integrations" };
export default PassThrough;
