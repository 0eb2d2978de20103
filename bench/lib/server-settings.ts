/** The servers' own settings that decide what a commit costs, read from them for the settings lines. */
import pg from "pg";
import { Redis } from "ioredis";

/** What a Redis persists: its append-only file and RDB snapshots, as the server reports them. */
export async function redisPersistence(url: string): Promise<string> {
  const redis = new Redis(url);
  try {
    const setting = async (name: string) => ((await redis.config("GET", name)) as string[])[1] ?? "";
    const [appendonly, fsync, save] = [await setting("appendonly"), await setting("appendfsync"), await setting("save")];
    const version = /redis_version:(\S+)/.exec(await redis.info("server"))?.[1] ?? "?";
    const snapshots = save ? `RDB snapshots "${save}"` : "no RDB snapshots";
    if (appendonly === "yes") return `Redis ${version} with an append-only file (appendonly yes, appendfsync ${fsync}), ${snapshots}`;
    return save ? `Redis ${version}, appendonly no, ${snapshots}` : `Redis ${version} without persistence (appendonly no, no RDB snapshots)`;
  } finally {
    redis.disconnect();
  }
}

/** The server's synchronous_commit, which every commit not setting its own follows. */
export async function pgSynchronousCommit(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]!.synchronous_commit;
  } finally {
    await client.end();
  }
}
