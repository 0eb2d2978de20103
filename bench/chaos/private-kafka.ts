/**
 * A Kafka broker of the chaos run's own: docker/kafka/start.sh with its own ports and state directory (the
 * script's JFAST_KAFKA_PORT, JFAST_KAFKA_CONTROLLER_PORT and JFAST_KAFKA_STATE), so the broker on 9092 that the
 * tests share is never touched. A kill is kill -9 of its JVM; the restart runs the same java command on the same
 * server.properties without formatting (start.sh formats fresh storage), so the log and the committed offsets
 * come back from disk as after a crash.
 *
 * `advertise`: given the port the broker listens on, returns the port it tells clients to use after their first
 * metadata request (JFAST_KAFKA_ADVERTISED_PORT): a FaultProxy's in front of it, so every client connection,
 * not only the bootstrap, goes through the proxy. `brokers` is then the proxy's address.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sleep } from "../lib/subject.js";
import { alive, freePort } from "./free-port.js";

const run = promisify(execFile);
const SCRIPTS = new URL("../../docker/kafka/", import.meta.url).pathname;
const LIBS = new URL("../../.ci/kafka/libs", import.meta.url).pathname;
// As start.sh starts it (C1 only, the serial collector: a test broker starts faster).
const JVM_OPTS = ["-Xms256m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true", `-Dlog4j2.configurationFile=${SCRIPTS}log4j2.properties`];

export interface PrivateKafka {
  brokers: string;
  kill9(downMs: number): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateKafka(params: { advertise?: (port: number) => Promise<number> } = {}): Promise<PrivateKafka> {
  const state = mkdtempSync(path.join(tmpdir(), "jfast-chaos-kafka-"));
  const pidFile = path.join(state, "kafka.pid");
  const pid = () => Number(readFileSync(pidFile, "utf8").trim());
  const port = await freePort();
  const controllerPort = await freePort();
  const advertisedPort = params.advertise ? await params.advertise(port) : port;
  const env = {
    ...process.env,
    JFAST_KAFKA_PORT: String(port),
    JFAST_KAFKA_ADVERTISED_PORT: String(advertisedPort),
    JFAST_KAFKA_CONTROLLER_PORT: String(controllerPort),
    JFAST_KAFKA_STATE: state,
    JFAST_KAFKA_START_TIMEOUT: "180",
  };
  try {
    await run("bash", [`${SCRIPTS}start.sh`], { env, timeout: 600_000 });
  } catch (error) {
    // A broker that started but was not ready in time is still ours to stop.
    killBroker(pid);
    rmSync(state, { recursive: true, force: true });
    throw error;
  }
  return {
    brokers: `127.0.0.1:${advertisedPort}`,
    async kill9(downMs) {
      const jvm = pid();
      try {
        process.kill(jvm, "SIGKILL");
        for (let i = 0; i < 500 && alive(jvm); i++) await sleep(10);
        await sleep(downMs);
      } finally {
        const log = path.join(state, "restart.log");
        const child = spawn("java", [...JVM_OPTS, "-cp", `${LIBS}/*`, "kafka.Kafka", path.join(state, "server.properties")], {
          detached: true,
          stdio: ["ignore", openSync(log, "w"), openSync(log, "a")],
        });
        child.unref();
        writeFileSync(pidFile, String(child.pid));
        const deadline = Date.now() + 180_000;
        while (!/Transition from STARTING to STARTED|Kafka Server started/.test(readFileSync(log, "utf8"))) {
          if (!alive(child.pid!)) throw new Error(`chaos: the private Kafka broker exited during its restart: ${readFileSync(log, "utf8").slice(-1500)}`);
          if (Date.now() > deadline) throw new Error(`chaos: the private Kafka broker did not restart within 180 s (log ${log})`);
          await sleep(200);
        }
      }
    },
    async destroy() {
      killBroker(pid);
      await sleep(200);
      rmSync(state, { recursive: true, force: true });
    },
  };
}

function killBroker(pid: () => number): void {
  try {
    const jvm = pid();
    if (alive(jvm)) process.kill(jvm, "SIGKILL");
  } catch {
    // never started
  }
}
