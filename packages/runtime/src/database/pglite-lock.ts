import { open, readFile, unlink } from "node:fs/promises";
import { BackendError } from "../errors/jfast-error.js";

/**
 * The embedded database is files used by exactly one PGlite at a time; two processes (or two apps in one
 * process) opening the same directory would corrupt it. A lock file holding the owner's pid refuses the
 * second opener with the way out; a lock left by a process that no longer runs is taken over.
 */
export async function lockDataDir(lockFile: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(lockFile, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      return async () => {
        await unlink(lockFile).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number((await readFile(lockFile, "utf8").catch(() => "")).trim());
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
      throw new BackendError(
        `the embedded database is already open ${owner === process.pid ? "in this process" : `in process ${owner}`} (${lockFile})`,
        {
          code: "EMBEDDED_DATABASE_LOCKED",
          hint:
            "the embedded database serves one process: run the API and the worker together with `jfast dev`, or set DATABASE_URL so several processes share a PostgreSQL server" +
            (owner === process.pid ? "; stop the first app (await jfast.stop()) before building another on the same root" : ""),
          docs: "jfast docs postgres#embedded-database",
        },
      );
    }
    // Stale: its process is gone.
    await unlink(lockFile).catch(() => undefined);
  }
  throw new BackendError(`could not take the embedded database lock ${lockFile}`, {
    code: "EMBEDDED_DATABASE_LOCKED",
    hint: "another process keeps recreating it; stop the other jfast process",
    docs: "jfast docs postgres#embedded-database",
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
