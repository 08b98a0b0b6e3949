# syntax=docker/dockerfile:1
# Gatehouse: the build stage compiles TypeScript with the dev dependencies; the runtime stage holds
# only dist/, web/, assets/ and the production dependencies, and runs as the unprivileged `node` user.
# See docs/containers.md.

# The base: any Debian-family image with Node 24, npm and an unprivileged `node` user (uid 1000).
# The public node:24-slim by default; CI builds its own from Debian and Node from the npm registry
# and passes `--build-arg BASE=localhost/gatehouse-base:…` (scripts/container-ci.sh).
ARG BASE=node:24-slim

FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the image's Node is 24, so the optional dependency `node` (a Node 24 for machines
# whose Node is too old, scripts/node-runtime.mjs) must not fetch a second one; better-sqlite3 loads
# its shipped Node-API prebuild and needs no script.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The message keys' type is read from locales/en.json (src/platform/i18n/languages.ts).
COPY locales ./locales
RUN npm run build

# Production dependencies on their own, so the runtime image carries no compiler or test tools.
# better-sqlite3 and @node-rs/argon2 ship prebuilt binaries for glibc (x64, arm64): no toolchain needed.
FROM ${BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${BASE} AS runtime
WORKDIR /app
# MALLOC_MMAP_THRESHOLD_: glibc serves allocations of 32 KiB and more (V8's compiler zones among
# them) from their own mappings, returned on free instead of held in the heap: the same setting as
# `npm start` (~12 MB lower peak RSS, same speed; docs/benchmarks.md, peak memory).
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/app/data/gatehouse.db \
    MALLOC_MMAP_THRESHOLD_=32768
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The hosted pages' HTML fragments, scripts and stylesheet (served from memory, docs/pages.md).
COPY web ./web
# The message catalogs of the pages, the console and the mails (docs/languages.md).
COPY locales ./locales
# The breached-password filter the password policy reads on first use (docs/security.md).
COPY assets ./assets
COPY package.json ./
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 3000
# Readiness through /health/detailed (docs/operations.md, "Readiness"): 200 only while requests are
# served (the database answers, no check fails, no load shedding); with Node's own fetch: no curl in
# a slim image.
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/detailed').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The CLI is the entry point: `docker run IMAGE migrate`, `… users export`, and by default `serve`.
# --max-semi-space-size=2 and --heap-growing-percent=20: the same V8 heap settings as `npm start`
# (a young generation capped at 2 MB semi-spaces, the old generation grown by 20% steps instead of
# V8's adaptive up-to-4×: lower peak RSS, same speed; docs/benchmarks.md, peak memory).
ENTRYPOINT ["node", "--max-semi-space-size=2", "--heap-growing-percent=20", "dist/src/cli.js"]
CMD ["serve"]
