import { redirect } from "next/navigation";
import { dashboardConfig } from "~/server/config";
import { currentPerson } from "~/server/session";
import { withBase } from "~/base-path";

export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ error?: string; wait?: string }> }) {
  const { error, wait } = await searchParams;
  // Signed in already, or named by the single sign-on proxy: nothing to do here.
  if (await currentPerson()) redirect("/");
  const config = dashboardConfig();
  const nobody = config.users.length === 0;
  return (
    <main className="login">
      <section className="card" aria-label="Log in">
        <h1>jfast dashboard</h1>
        {nobody ? (
          <p className="alert alert-info" role="status">
            No users are configured. Add <code>users</code> to the config file (or <code>JFAST_DASHBOARD_USERS</code>) and restart the dashboard.
          </p>
        ) : null}
        {error === "locked" ? (
          <p className="alert alert-bad" role="alert">
            Too many failed sign-ins from this address or for this name. Try again in {Number(wait) || 1} seconds.
          </p>
        ) : error ? (
          <p className="alert alert-bad" role="alert">
            Wrong name or password.
          </p>
        ) : null}
        <form action={withBase("/api/login")} method="post" className="stack">
          <label className="field">
            Name
            <input className="input" type="text" name="name" autoComplete="username" defaultValue={config.sharedPassword && config.users.length === 1 ? "admin" : undefined} required autoFocus />
          </label>
          <label className="field">
            Password
            <input className="input" type="password" name="password" autoComplete="current-password" required />
          </label>
          <button className="button button-primary" type="submit">
            Log in
          </button>
        </form>
      </section>
    </main>
  );
}
