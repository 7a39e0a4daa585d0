import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Members · Settings" };
export default PassThrough;
