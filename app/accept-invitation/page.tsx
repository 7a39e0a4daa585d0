import { Suspense } from "react";
import { AcceptInvitation } from "./accept";

export const metadata = { title: "Accept invitation" };

export default function AcceptInvitationPage() {
  return (
    <Suspense>
      <AcceptInvitation />
    </Suspense>
  );
}
