// A listening port is never shared between processes: a second copy of a process that finds its
// port taken stops with one line instead of splitting calls with the first (SO_REUSEPORT would
// let both listen and the kernel share the connections between them).

/** Whether a listen error means another process already holds the port. */
export const isPortInUse = (error: unknown) => (error as { code?: string } | null)?.code === "EADDRINUSE";

/** One line naming the port another process already listens on, among the ones this process tried. */
export function portInUseMessage(error: unknown, candidates: number[]): string {
  const { port, message = "" } = error as { port?: number; message?: string };
  const found = port ?? candidates.find((p) => new RegExp(`\\b${p}\\b`).test(message));
  return `port ${found ?? candidates.join(" or ")} is already in use by another process (is another copy already running?)`;
}
