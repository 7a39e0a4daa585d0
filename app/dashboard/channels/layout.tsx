import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Channels · Integrations" };
export default PassThrough;
