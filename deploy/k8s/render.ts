// Renders a kustomization directory (deploy/k8s/base, deploy/k8s/overlays/*) the way
// `kubectl kustomize` does, for the features these manifests use: resources (files and
// directories), namespace, images, replicas and patches (strategic merge or JSON 6902, inline or
// from a file, with an optional target). CI validates what it renders without a kustomize binary;
// test/unit/k8s-render-kustomize.test.ts compares it, object for object, with `kubectl kustomize`
// (the suite's setup installs Debian's kubectl when none is there).
// `bun deploy/k8s/render.ts deploy/k8s/overlays/production` prints the objects as YAML.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments, stringify } from "yaml";

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
};

interface Kustomization {
  namespace?: string;
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
  replicas?: { name: string; count: number }[];
  patches?: { path?: string; patch?: string; target?: Target }[];
}

interface Target {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
}

// Kinds without a namespace among those these manifests could hold.
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PriorityClass", "StorageClass", "IngressClass"]);
const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const FIELDS = new Set(["apiVersion", "kind", "namespace", "resources", "images", "replicas", "patches"]);

function parseYaml(text: string, where: string): unknown[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length) throw new Error(`${where}: ${doc.errors[0].message}`);
    return doc.toJSON();
  }).filter((value) => value !== null && value !== undefined);
}

function kustomizationIn(dir: string): Kustomization {
  const file = KUSTOMIZATION_FILES.map((name) => join(dir, name)).find((path) => existsSync(path));
  if (!file) throw new Error(`${dir}: no kustomization.yaml`);
  const [kustomization] = parseYaml(readFileSync(file, "utf8"), file) as Record<string, unknown>[];
  // Anything this renderer does not implement fails loudly instead of rendering something else.
  for (const key of Object.keys(kustomization)) if (!FIELDS.has(key)) throw new Error(`${file}: "${key}" is not supported by deploy/k8s/render.ts`);
  return kustomization as Kustomization;
}

/** Every object the kustomization in `dir` produces, in the order its resources list them. */
export function renderKustomization(dir: string): K8sObject[] {
  const root = resolve(dir);
  const k = kustomizationIn(root);
  let objects: K8sObject[] = [];
  for (const entry of k.resources ?? []) {
    const path = resolve(root, entry);
    if (statSync(path).isDirectory()) objects.push(...renderKustomization(path));
    else objects.push(...(parseYaml(readFileSync(path, "utf8"), path) as K8sObject[]));
  }
  for (const patch of k.patches ?? []) objects = applyPatch(objects, patch, root);
  if (k.namespace) for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
  for (const image of k.images ?? []) for (const o of objects) for (const c of containersOf(o)) setImage(c, image);
  for (const { name, count } of k.replicas ?? []) {
    const found = objects.filter((o) => ["Deployment", "StatefulSet", "ReplicaSet"].includes(o.kind) && o.metadata.name === name);
    if (!found.length) throw new Error(`${root}: replicas for ${name}, which is not among the resources`);
    for (const o of found) (o.spec as Record<string, unknown>).replicas = count;
  }
  return objects;
}

function containersOf(o: K8sObject): Record<string, unknown>[] {
  const spec = o.kind === "Pod" ? o.spec : ((o.spec as { template?: { spec?: unknown } } | undefined)?.template?.spec);
  if (!spec || typeof spec !== "object") return [];
  const s = spec as { containers?: Record<string, unknown>[]; initContainers?: Record<string, unknown>[] };
  return [...(s.containers ?? []), ...(s.initContainers ?? [])];
}

function setImage(container: Record<string, unknown>, image: NonNullable<Kustomization["images"]>[number]): void {
  const current = String(container.image ?? "");
  const at = current.indexOf("@");
  const withoutDigest = at < 0 ? current : current.slice(0, at);
  const colon = withoutDigest.lastIndexOf(":");
  const hasTag = colon > withoutDigest.lastIndexOf("/");
  const name = hasTag ? withoutDigest.slice(0, colon) : withoutDigest;
  if (name !== image.name) return;
  const tag = hasTag ? withoutDigest.slice(colon + 1) : undefined;
  const newName = image.newName ?? name;
  container.image = image.digest ? `${newName}@${image.digest}` : image.newTag ? `${newName}:${image.newTag}` : tag ? `${newName}:${tag}` : newName;
}

function matches(o: K8sObject, target: Target): boolean {
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
  // kustomize reads each selector field as a regular expression over the whole value.
  const test = (pattern: string | undefined, value: string | undefined) => pattern === undefined || new RegExp(`^(?:${pattern})$`).test(value ?? "");
  return test(target.group, group) && test(target.version, version) && test(target.kind, o.kind) && test(target.name, o.metadata.name) && test(target.namespace, o.metadata.namespace);
}

function applyPatch(objects: K8sObject[], patch: NonNullable<Kustomization["patches"]>[number], root: string): K8sObject[] {
  const where = patch.path ? join(root, patch.path) : `${root} (inline patch)`;
  const text = patch.path ? readFileSync(join(root, patch.path), "utf8") : patch.patch ?? "";
  const docs = parseYaml(text, where);
  if (docs.length === 1 && Array.isArray(docs[0])) {
    if (!patch.target) throw new Error(`${where}: a JSON 6902 patch needs a target`);
    const targets = objects.filter((o) => matches(o, patch.target!));
    if (!targets.length) throw new Error(`${where}: its target matches no resource`);
    for (const o of targets) for (const op of docs[0] as JsonPatchOp[]) applyJsonPatchOp(o, op, where);
    return objects;
  }
  for (const doc of docs as K8sObject[]) {
    const targets = patch.target ? objects.filter((o) => matches(o, patch.target!)) : objects.filter((o) => o.kind === doc.kind && o.metadata.name === doc.metadata?.name);
    if (!targets.length) throw new Error(`${where}: no resource ${doc.kind}/${doc.metadata?.name} to patch`);
    for (const o of targets) {
      const { metadata, ...rest } = doc;
      const { name: _name, ...otherMetadata } = metadata ?? { name: "" };
      Object.assign(o, mergePatch(o, { ...rest, metadata: otherMetadata }));
    }
  }
  return objects;
}

/**
 * Strategic merge for the shapes patched here: maps merge key by key (null deletes), lists
 * whose items all carry a `name` (containers, env, volumes, ports) merge item by item on it,
 * any other list is replaced.
 */
function mergePatch(base: unknown, patch: unknown): unknown {
  if (Array.isArray(patch)) {
    const named = (list: unknown[]) => list.every((item) => item && typeof item === "object" && "name" in item);
    if (!Array.isArray(base) || !named(base) || !named(patch)) return structuredClone(patch);
    const merged = [...base];
    for (const item of patch as { name: string }[]) {
      const at = merged.findIndex((existing) => (existing as { name: string }).name === item.name);
      if (at < 0) merged.push(structuredClone(item));
      else merged[at] = mergePatch(merged[at], item);
    }
    return merged;
  }
  if (patch && typeof patch === "object") {
    const result: Record<string, unknown> = base && typeof base === "object" && !Array.isArray(base) ? { ...(base as Record<string, unknown>) } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete result[key];
      else result[key] = mergePatch(result[key], value);
    }
    return result;
  }
  return patch;
}

interface JsonPatchOp {
  op: "add" | "remove" | "replace";
  path: string;
  value?: unknown;
}

function applyJsonPatchOp(o: K8sObject, op: JsonPatchOp, where: string): void {
  if (!["add", "remove", "replace"].includes(op.op)) throw new Error(`${where}: JSON patch op "${op.op}" is not supported by deploy/k8s/render.ts`);
  const keys = op.path.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  const last = keys.pop();
  if (last === undefined) throw new Error(`${where}: cannot ${op.op} the whole object`);
  let parent: unknown = o;
  for (const key of keys) {
    parent = (parent as Record<string, unknown> | undefined)?.[key];
    if (!parent || typeof parent !== "object") throw new Error(`${where}: ${o.kind}/${o.metadata.name} has no ${op.path}`);
  }
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length || (op.op !== "add" && index === parent.length)) throw new Error(`${where}: ${o.kind}/${o.metadata.name} has no ${op.path}`);
    if (op.op === "add") parent.splice(index, 0, structuredClone(op.value));
    else if (op.op === "replace") parent[index] = structuredClone(op.value);
    else parent.splice(index, 1);
    return;
  }
  const record = parent as Record<string, unknown>;
  if (op.op !== "add" && !(last in record)) throw new Error(`${where}: ${o.kind}/${o.metadata.name} has no ${op.path}`);
  if (op.op === "remove") delete record[last];
  else record[last] = structuredClone(op.value);
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) {
    console.error("usage: bun deploy/k8s/render.ts <kustomization directory>");
    process.exit(2);
  }
  console.log(renderKustomization(dir).map((o) => stringify(o)).join("---\n"));
}
