import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Assistant" };
export default PassThrough;
