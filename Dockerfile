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
# (Nest, TypeORM, the pg and better-sqlite3 drivers, Bull, ioredis) and the one dev dependency it
# imports (@nestjs/throttler, for its rate-limited tool), each pinned to the version of the lock
# file; the manifest drops the dev dependencies and scripts. This stage has the compilers
# better-sqlite3 falls back to when no prebuilt binary matches.
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN node -e "const fs = require('fs'); const pkg = require('./package.json'); const lock = require('./package-lock.json'); for (const name of [...Object.keys(pkg.peerDependencies), '@nestjs/throttler']) pkg.dependencies[name] = lock.packages['node_modules/' + name].version; delete pkg.devDependencies; delete pkg.scripts; fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2));" \
 && npm install --omit=dev --no-audit --no-fund \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=deps /app/package.json ./
# The SQLite default writes under ./data; owned by the unprivileged user the app runs as.
RUN mkdir data && chown node:node data
USER node
EXPOSE 3000
CMD ["node", "dist/main.js"]
