// The dispatcher's short memory of project names, which every completion payload carries
// (data.project). A burst of completions from one project asks accounts-billing once instead of
// once per article; a rename shows in payloads frozen after the memory lapses.

export const PROJECT_NAME_MEMORY_MS = 5_000;
const MAX_PROJECTS = 1000;

export class ProjectNames {
  private readonly entries = new Map<bigint, { name: Promise<string>; until: number }>();

  constructor(
    private readonly lookup: (projectId: bigint) => Promise<string>,
    private readonly keepMs = PROJECT_NAME_MEMORY_MS,
  ) {}

  /** The project's name; concurrent first requests share one lookup, and a failed one is not remembered. */
  nameOf(projectId: bigint): Promise<string> {
    const now = Date.now();
    const known = this.entries.get(projectId);
    if (known && known.until > now) return known.name;
    const entry = { name: this.lookup(projectId), until: now + this.keepMs };
    this.entries.delete(projectId);
    this.entries.set(projectId, entry);
    entry.name.catch(() => {
      if (this.entries.get(projectId) === entry) this.entries.delete(projectId);
    });
    // Oldest first out: insertion order is the order they were looked up.
    while (this.entries.size > MAX_PROJECTS) this.entries.delete(this.entries.keys().next().value!);
    return entry.name;
  }
}
