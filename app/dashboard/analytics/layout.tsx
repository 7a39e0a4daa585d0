import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Analytics" };
export default PassThrough;
