// deploy/k8s/render.ts renders the manifests without a kustomize binary (CI validates what it
// renders); here each setup it renders is compared, object for object and field for field, with
// what `kubectl kustomize` renders from the same directory. kubectl comes from Debian's
// kubernetes-client, installed by the suite's setup (deploy/scripts/ensure-kubectl.sh).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { renderKustomization, type K8sObject } from "../../deploy/k8s/render.ts";

const K8S = join(import.meta.dir, "../../deploy/k8s");
const SETUPS = ["base", "overlays/local", "overlays/production"];

/** Objects by kind, namespace and name, so that the two renderings' orders do not matter. */
const byIdentity = (objects: K8sObject[]) =>
  Object.fromEntries(objects.map((o) => [`${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`, o]));

function kubectlKustomize(dir: string): K8sObject[] {
  const run = Bun.spawnSync(["kubectl", "kustomize", dir], { stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) {
    const version = Bun.spawnSync(["kubectl", "version", "--client"], { stdout: "pipe" }).stdout.toString().split("\n")[0];
    throw new Error(`kubectl kustomize ${dir} failed (${version}; these manifests need kubectl 1.21 or later): ${run.stderr.toString().trim()}`);
  }
  return parseAllDocuments(run.stdout.toString()).map((doc) => doc.toJS() as K8sObject).filter(Boolean);
}

describe("render.ts against kubectl kustomize", () => {
  for (const setup of SETUPS) {
    test(`${setup}: the same objects, field for field`, () => {
      const dir = join(K8S, setup);
      const ours = byIdentity(renderKustomization(dir));
      const theirs = byIdentity(kubectlKustomize(dir));
      expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
      expect(ours).toEqual(theirs);
    });
  }
});
