export interface Mailer {
  send(message: { to: string; subject: string; body: string }): Promise<void>;
}

// The service's own provider, declared once: ctx.require("mailer") is a Mailer everywhere.
declare module "@jfast/runtime" {
  interface Providers {
    mailer: Mailer;
  }
}

/**
 * A development mailer: prints instead of delivering. A real service registers its SMTP or API client under
 * the same provider name ("mailer"); tasks reach it with ctx.require("mailer") in the API and the worker alike.
 */
export function createDevMailer(params: { write?: (line: string) => void } = {}): Mailer {
  const write = params.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  return {
    async send(message) {
      write(`[mailer] to=${message.to} subject=${JSON.stringify(message.subject)}`);
    },
  };
}
