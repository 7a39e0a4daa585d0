// Both OpenAPI documents pass the two linters an integrator's tooling runs: Spectral's `spectral:oas` ruleset
// (every severity, hints included) and Redocly's `recommended` rules, with no finding at all. The linters run
// in-process from their libraries (the same rules as their CLIs), so CI checks the documents the server serves.
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core";
import * as Parsers from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { describe, expect, it } from "vitest";
import { handleAgentRequest } from "../../server/http/agent-rest";
import { handleRestRequest } from "../../server/http/rest-bridge";

const DOCUMENTS = ["/api/v1/openapi.json", "/api/agent/v1/openapi.json"] as const;

/** The served document: over HTTP when the suite runs against a server (API_BASE_URL), else in-process. */
async function servedDocument(path: (typeof DOCUMENTS)[number]): Promise<string> {
  const request = new Request(`${process.env.API_BASE_URL ?? "http://127.0.0.1"}${path}`);
  const res = process.env.API_BASE_URL ? await fetch(request) : await (path.startsWith("/api/v1") ? handleRestRequest : handleAgentRequest)(request);
  expect(res.status, path).toBe(200);
  return await res.text();
}

async function spectralFindings(text: string, path: string): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] });
  const results = await spectral.run(new Document(text, Parsers.Json, path));
  // Every finding, whatever its severity (0 error … 3 hint), named so a failure says what to fix.
  return results.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`);
}

async function redoclyFindings(text: string, path: string): Promise<string[]> {
  const config = await createConfig({ extends: ["recommended"] });
  const problems = await lintFromString({ source: text, absoluteRef: path, config });
  return problems.map((p) => `${p.ruleId} (${p.severity}) at ${p.location[0]?.pointer}: ${p.message}`);
}

describe.each(DOCUMENTS)("%s", (path) => {
  it("lints_with_no_finding_under_spectral_oas", async () => {
    expect(await spectralFindings(await servedDocument(path), path)).toEqual([]);
  });

  it("lints_with_no_finding_under_redocly_recommended", async () => {
    expect(await redoclyFindings(await servedDocument(path), path)).toEqual([]);
  });
});

it("the_linters_report_a_document_without_licence_and_with_an_undeclared_tag", async () => {
  // The checks above can fail: the same document, spoiled the way the first lint of this project found it.
  const doc = JSON.parse(await servedDocument(DOCUMENTS[0]));
  delete doc.info.license;
  doc.tags = doc.tags.slice(1);
  const text = JSON.stringify(doc);
  expect((await spectralFindings(text, "spoiled.json")).some((f) => f.startsWith("operation-tag-defined"))).toBe(true);
  expect((await redoclyFindings(text, "spoiled.json")).some((f) => f.startsWith("info-license"))).toBe(true);
});
