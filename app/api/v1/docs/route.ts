// The interactive API reference (server/http/api-reference.ts); the lean front answers this path
// itself with the same handler. It touches no database: nothing is started for it.
import { answerApiReferencePage } from "@/server/http/api-reference";

export const dynamic = "force-dynamic";
export {
  answerApiReferencePage as GET,
  answerApiReferencePage as HEAD,
  answerApiReferencePage as POST,
  answerApiReferencePage as PUT,
  answerApiReferencePage as PATCH,
  answerApiReferencePage as DELETE,
};
