# The example app (src/main.ts) as a production image: `docker compose up` (see docker-compose.yml),
# or `docker build -t durable-mcp-example .` and run it with DATABASE_URL, REDIS_URL and MCP_TOKENS.

# Build: every dependency, then the app and the library compiled to dist/.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No scripts: the prepare script needs the sources, and compiling needs no native module.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npx nest build

# Runtime dependencies: the package's own dependencies plus the peers the example app runs on
# (Nest, TypeORM, the pg and better-sqlite3 drivers, Bull, ioredis) and the two dev dependencies
# it imports (@nestjs/throttler, for its rate-limited tool, and zod, for its Zod tool), each
# pinned to the version of the lock file; the manifest drops the dev dependencies and scripts.
# The install runs no package's install scripts (the lock file pins what is installed, not what
# those scripts would run): only better-sqlite3, the one native module the app needs built, is
# rebuilt, with its own script (a prebuilt binary, or the compilers of this stage when none
# matches). msgpackr-extract (under Bull) needs no script: its prebuilt binary comes as an
# optional package.
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN node -e "const fs = require('fs'); const pkg = require('./package.json'); const lock = require('./package-lock.json'); for (const name of [...Object.keys(pkg.peerDependencies), '@nestjs/throttler', 'zod']) pkg.dependencies[name] = lock.packages['node_modules/' + name].version; delete pkg.devDependencies; delete pkg.scripts; fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2));" \
 && npm ci --ignore-scripts --omit=dev --no-audit --no-fund \
 && npm rebuild better-sqlite3 \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

FROM node:20-bookworm-slim AS runtime
# An init as PID 1: it forwards SIGTERM to node (the drain) and reaps orphans. Node as PID 1 does
# not: a stdio server's own children, orphaned when it exits, would stay zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=deps /app/package.json ./
# The SQLite default writes under ./data; owned by the unprivileged user the app runs as.
RUN mkdir data && chown node:node data
USER node
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
