// `npm run cli -- <group> <action> --help` prints a usage for every command in the table: a command
// added without one would show only "(no usage text …)".
import { describe, expect, it } from "vitest";
import { COMMANDS, executeCommand } from "../../server/cli/run-cli";
import { COMMAND_USAGE } from "../../server/cli/usage";

describe("operator CLI help", () => {
  it("every_command_has_a_usage_whose_synopsis_starts_with_its_name", async () => {
    const names = Object.keys(COMMANDS).sort();
    expect(names.length).toBeGreaterThanOrEqual(25);
    for (const name of names) {
      const usage = COMMANDS[name].usage ?? COMMAND_USAGE[name];
      expect(usage, name).toBeDefined();
      expect(usage.split("\n")[0].split(" --")[0].split(" ").slice(0, 2).join(" "), name).toBe(name);
      const help = await executeCommand(name.split(" "), { help: true });
      expect(help, name).toEqual({ code: 0, stdout: `Usage: npm run cli -- ${usage}\n`, stderr: "" });
    }
  });

  it("no_usage_text_is_left_for_a_command_that_does_not_exist", () => {
    for (const name of Object.keys(COMMAND_USAGE)) expect(COMMANDS[name], name).toBeDefined();
  });
});
