// Workload identities for tests that run a service server of their own: the launcher's keys in a
// temporary directory, a verifier that reads them, and tokens for any caller. The verifier's log
// lines are kept, so a test can read why a token was refused.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareWorkloadTokens, type WorkloadTokens } from "../../deploy/local/workload-tokens.ts";
import { CallerVerifier, loadIdentitySettings, type IdentitySettings } from "../../services/kit/src/workload-identity.ts";

export interface TestIdentity {
  tokens: WorkloadTokens;
  settings: IdentitySettings;
  verifier: CallerVerifier;
  /** The verifier's log lines as written (message and fields as JSON), oldest first. */
  logged: string[];
  remove(): void;
}

export async function testIdentity(): Promise<TestIdentity> {
  const dir = mkdtempSync(join(tmpdir(), "identity-test-"));
  const tokens = await prepareWorkloadTokens(dir);
  const settings = loadIdentitySettings({ ...tokens.env, IDENTITY_TOKEN_FILE: join(dir, "unused") });
  const logged: string[] = [];
  return {
    tokens,
    settings,
    verifier: new CallerVerifier(settings, { warn: (message, fields) => logged.push(JSON.stringify({ message, ...fields })) }),
    logged,
    remove() {
      tokens.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
