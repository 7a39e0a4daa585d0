// Structured JSON log lines, all on stderr: stdout belongs to command output (the CLI's JSON).
// Never pass a secret (API key, webhook secret, CRM credential) in `fields`.
import { setting } from "./settings";

type Fields = Record<string, unknown>;
const quiet = () => setting("LOG_LEVEL") === "silent";
const line = (level: string, msg: string, fields?: Fields) => JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields });

export const log = {
  info: (msg: string, fields?: Fields) => {
    if (setting("LOG_LEVEL") === "info") console.error(line("info", msg, fields));
  },
  warn: (msg: string, fields?: Fields) => {
    if (!quiet()) console.warn(line("warn", msg, fields));
  },
  error: (msg: string, fields?: Fields) => {
    if (!quiet()) console.error(line("error", msg, fields));
  },
};
