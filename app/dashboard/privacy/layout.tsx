import { PassThrough } from "../../_ui/passthrough-layout";

export const metadata = { title: "Privacy · Settings" };
export default PassThrough;
