import { currentTenantId } from "@jfast/runtime";

export interface SentEmail {
  to: string;
  subject: string;
  body: string;
  /** The tenant the sending code ran for (restored from the request that enqueued the job). */
  tenantId: string | null;
  sentAt: string;
}

export interface Mailer {
  send(message: { to: string; subject: string; body: string }): Promise<SentEmail>;
  /** What this process has sent, newest last (a development mailer keeps it to be inspected). */
  sent(filter?: { tenantId?: string | null }): SentEmail[];
}

/**
 * A development mailer: prints instead of delivering and remembers what it sent. A real service registers
 * its SMTP or API client under the same provider name; tasks reach it with ctx.require("mailer").
 */
export function createDevMailer(params: { log?: (line: string) => void } = {}): Mailer {
  const outbox: SentEmail[] = [];
  const log = params.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  return {
    async send(message) {
      const email: SentEmail = { ...message, tenantId: currentTenantId(), sentAt: new Date().toISOString() };
      outbox.push(email);
      log(`[mailer] to=${email.to} tenant=${email.tenantId ?? "-"} subject=${JSON.stringify(email.subject)}`);
      return email;
    },
    sent(filter = {}) {
      return outbox.filter((e) => filter.tenantId === undefined || e.tenantId === filter.tenantId);
    },
  };
}
