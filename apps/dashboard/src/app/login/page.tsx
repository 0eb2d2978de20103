import { dashboardConfig } from "~/server/config";

export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  const configured = dashboardConfig().password !== null;
  return (
    <main className="login">
      <section className="card" aria-label="Log in">
        <h1>jfast dashboard</h1>
        {!configured ? (
          <p className="alert alert-info" role="status">
            No password is configured. Set <code>JFAST_DASHBOARD_PASSWORD</code> and restart the dashboard.
          </p>
        ) : null}
        {error ? (
          <p className="alert alert-bad" role="alert">
            Wrong password.
          </p>
        ) : null}
        <form action="/api/login" method="post" className="stack">
          <label className="field">
            Password
            <input className="input" type="password" name="password" autoComplete="current-password" required autoFocus />
          </label>
          <button className="button button-primary" type="submit">
            Log in
          </button>
        </form>
      </section>
    </main>
  );
}
