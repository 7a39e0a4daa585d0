import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "API keys · Integrations" };
export default PassThrough;
