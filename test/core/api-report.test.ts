// The checked-in API report (docs/api.md) is the API the build declares: a change of any subpath's
// exports or of a signature fails here until `npm run api:report` writes it down, for review.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("the public API report", () => {
  it("docs/api.md is what dist/**/*.d.ts declares (npm run api:report rewrites it)", () => {
    const built = execFileSync(process.execPath, ["scripts/api-report.js", "--print"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(built).toBe(readFileSync(`${root}docs/api.md`, "utf8"));
  }, 60_000);

  it("the versioning policy names every subpath, and the changelog has the package's version", () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
    const policy = readFileSync(`${root}docs/versioning.md`, "utf8");
    for (const s of Object.keys(pkg.exports).filter((s) => s !== "./package.json"))
      expect(policy).toContain(`\`${s === "." ? "picomcp" : `picomcp/${s.slice(2)}`}\``);
    const changelog = readFileSync(`${root}CHANGELOG.md`, "utf8");
    expect(changelog).toContain(`\n## ${pkg.version}\n`);
  });

  it("names every subpath of package.json's exports", () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
    const report = readFileSync(`${root}docs/api.md`, "utf8");
    const sections = [...report.matchAll(/^## (\S+)$/gm)].map((m) => m[1]);
    const subpaths = Object.keys(pkg.exports)
      .filter((s) => s !== "./package.json")
      .map((s) => (s === "." ? "picomcp" : `picomcp/${s.slice(2)}`));
    expect(sections).toEqual(subpaths);
  });
});
