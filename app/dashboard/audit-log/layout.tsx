import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Audit log · Settings" };
export default PassThrough;
