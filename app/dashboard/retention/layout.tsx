import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Data retention · Settings" };
export default PassThrough;
