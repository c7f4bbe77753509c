# The service as `npm start` runs it: the bundle (scripts/bundle.ts, the service and its
# commands) on the production dependencies only, as a non-root user under an init that reaps.
#   docker build -t animal-store .
#   docker run -p 8080:8080 -v animal-store-data:/data animal-store
# test/e2e/container.test.ts builds and runs it where a container engine is available,
# and checks that CMD runs what package.json's start script runs. With podman, build with
# `podman build --format docker`: the OCI format it defaults to has no HEALTHCHECK.
# The base image is named by tag: pin it by digest in a deployment's own build
# (`FROM node:24-slim@sha256:…`, from `docker buildx imagetools inspect node:24-slim`).

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the one that matters is the `node` devDependency's, which would
# download a second Node 24 next to the image's own.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/bundle.ts scripts/
COPY src src
RUN node scripts/bundle.ts

FROM node:24-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# No npm install here: the package has no runtime dependencies of its own (the store
# drivers and the platform are optional peers, and the bundle holds them). package.json
# stays for the version and the peers' names the service reports.
COPY package.json ./
RUN mkdir -p node_modules/.cache /data \
  && chown node:node node_modules/.cache /data
# The bundle holds everything but PGlite (its WebAssembly and data files sit next to its
# modules) and sharp with its libvips binding (@img: the platform's, and what sharp needs
# of its own), copied from the full install.
COPY --from=build /app/node_modules/@electric-sql/pglite node_modules/@electric-sql/pglite
COPY --from=build /app/node_modules/sharp node_modules/sharp
COPY --from=build /app/node_modules/@img node_modules/@img
COPY --from=build /app/node_modules/detect-libc node_modules/detect-libc
COPY --from=build /app/node_modules/semver node_modules/semver
COPY --from=build /app/build build
USER node
# MALLOC_ARENA_MAX=2: glibc gives every thread that allocates (libvips' among them) an arena
# of its own, and keeps what was freed in each; with 2, four photo uploads at once peaked
# about 45 MB lower (package.json's start script sets it too).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    NODE_COMPILE_CACHE=node_modules/.cache/node-compile-cache
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tini is PID 1: it passes SIGTERM on to node (a clean drain) and reaps.
ENTRYPOINT ["/usr/bin/tini", "--"]
# The commands run in the container with its settings: docker exec <container> node build/main.js keys list
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=20", "--no-maglev", "build/main.js", "serve"]
