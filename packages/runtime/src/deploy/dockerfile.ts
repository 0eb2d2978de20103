/**
 * The Dockerfile `jfast deploy compose` writes for a service that stands on its own (not in a workspace with
 * docker/Dockerfile): its package.json and lockfile, production dependencies only (@jfast/cli and tsx are
 * dependencies, so the service's TypeScript runs as it is), and the binary on PATH, so the compose and
 * Kubernetes commands (`jfast start`, `jfast worker`) run it directly and SIGTERM reaches it.
 */
export function serviceDockerfile(params: { serviceName: string }): string {
  return `# The image of ${params.serviceName}: its API (\`jfast start\`) and its worker (\`jfast worker\`) run from it.
# Written by \`jfast deploy compose\` because the service had no Dockerfile; it is yours to edit and is not
# rewritten while it exists. A service compiled to JavaScript adds its build step here.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json* ./
RUN if [ -f package-lock.json ]; then npm ci --omit=dev --no-audit --no-fund; \\
    else npm install --omit=dev --no-audit --no-fund; fi
COPY . .
# The embedded database (no DATABASE_URL) keeps its files under .jfast/.
RUN mkdir -p .jfast && chown node:node .jfast
# The binary itself, not npx or npm run: those do not pass SIGTERM on, and the grace period needs it.
ENV PATH=/app/node_modules/.bin:$PATH
USER node
CMD ["jfast", "start"]
`;
}

export const SERVICE_DOCKERIGNORE = `node_modules
.jfast
.git
*.log
compose.yml
`;
