// Workload identities for tests that run a service server of their own: the launcher's keys in a
// temporary directory, a verifier that reads them, and tokens for any caller.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareWorkloadTokens, type WorkloadTokens } from "../../deploy/local/workload-tokens.ts";
import { CallerVerifier, loadIdentitySettings, type IdentitySettings } from "../../services/kit/src/workload-identity.ts";

export interface TestIdentity {
  tokens: WorkloadTokens;
  settings: IdentitySettings;
  verifier: CallerVerifier;
  remove(): void;
}

export async function testIdentity(): Promise<TestIdentity> {
  const dir = mkdtempSync(join(tmpdir(), "identity-test-"));
  const tokens = await prepareWorkloadTokens(dir);
  const settings = loadIdentitySettings({ ...tokens.env, IDENTITY_TOKEN_FILE: join(dir, "unused") });
  return {
    tokens,
    settings,
    verifier: new CallerVerifier(settings),
    remove() {
      tokens.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
