#!/usr/bin/env bash
# The image, built and run (docs/containers.md, "Built and run in CI"): with podman, on a base built
# here from Debian (debootstrap, bookworm minbase) and Node 24 from the npm registry, so no image
# registry is needed. Builds the repository's Dockerfile on that base (`--build-arg BASE=…`), then
# runs the image as its non-root user twice: on SQLite in a volume, and on a fresh PostgreSQL
# database. Each run: `migrate`, `create-admin` (the CLI in the container), `serve` until the
# readiness endpoint and the image's HEALTHCHECK pass, a password login and an admin call with its
# token, a clean stop on SIGTERM. Exits non-zero on any failure; removes its containers, volume and
# database whatever happens. Run as root (debootstrap, the engine's storage).
#
#   bash scripts/container-ci.sh                   # CI (.ci/run calls it after the test suites)
#   GATEHOUSE_CI_REBUILD_BASE=1 bash scripts/…     # rebuild the base even if it exists
#
# Settings (environment): CI_POSTGRES_URL (postgres://postgres@127.0.0.1:5432), DEBIAN_MIRROR
# (http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."

T0=$(date +%s)
say() { echo "container-ci: [$(($(date +%s) - T0))s] $*"; }
fail() {
  echo "container-ci: FAIL: $*" >&2
  exit 1
}

[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap and podman's root storage)"

# --- The engine: Debian's podman with runc, the cgroupfs manager and host networking. ------------
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null || ! command -v runc >/dev/null; then
  say "installing podman, buildah, runc and debootstrap (Debian packages)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap uidmap >/dev/null
fi
# Containers may not set rlimits here (crun and runc refuse `setrlimit RLIMIT_NOFILE`): no default
# ulimits. Added once to /etc/containers/containers.conf, under [containers]; nothing else in it changes.
CONF=/etc/containers/containers.conf
if ! grep -Eq '^[[:space:]]*default_ulimits[[:space:]]*=[[:space:]]*\[[[:space:]]*\]' "$CONF" 2>/dev/null; then
  say "setting default_ulimits = [] in $CONF"
  mkdir -p /etc/containers
  if grep -q '^\[containers\]' "$CONF" 2>/dev/null; then
    grep -Eq '^[[:space:]]*default_ulimits' "$CONF" && fail "$CONF sets default_ulimits: make it [] (containers cannot set rlimits here)"
    sed -i 's/^\[containers\]$/[containers]\ndefault_ulimits = []/' "$CONF"
  else
    printf '\n[containers]\ndefault_ulimits = []\n' >>"$CONF"
  fi
fi
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)

# --- The base: Debian bookworm (minbase) + Node and npm from the npm registry + user `node`. -----
# The Node is the one running this script (Node 24, as .ci/run ensures); the tag names both
# versions, so a base already built is reused and a new Node or npm makes a new one.
NODE_VERSION="$(node -p 'process.versions.node')"
[ "${NODE_VERSION%%.*}" = 24 ] || fail "Node 24 is needed to pick the image's Node (this is $NODE_VERSION)"
NPM_VERSION="$(npm --version)"
ARCH="$(node -p 'process.arch')"
BASE="localhost/gatehouse-base:bookworm-node$NODE_VERSION-npm$NPM_VERSION"
IMAGE="localhost/gatehouse:ci"
WORK="$(mktemp -d /var/tmp/gatehouse-container-ci.XXXXXX)"
RUN_ID="$$"
PG_URL="${CI_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}"
PG_DB="gatehouse_container_${RUN_ID}_$(date +%s)"
VOLUME="gatehouse-ci-data-$RUN_ID"
CONTAINERS=()

cleanup() {
  local status=$?
  for name in "${CONTAINERS[@]}"; do "${PODMAN[@]}" rm -f -v -t 2 "$name" >/dev/null 2>&1 || true; done
  "${PODMAN[@]}" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  psql "$PG_URL/postgres" -qc "drop database if exists $PG_DB with (force)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  [ "$status" -eq 0 ] || echo "container-ci: failed after $(($(date +%s) - T0))s" >&2
}
trap cleanup EXIT

build_base() {
  local root="$WORK/rootfs"
  say "building the base $BASE: debootstrap bookworm (minbase)"
  debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
    >"$WORK/debootstrap.log" 2>&1 || {
    tail -20 "$WORK/debootstrap.log"
    fail "debootstrap"
  }
  say "Node $NODE_VERSION (node-linux-$ARCH) and npm $NPM_VERSION from the npm registry"
  (cd "$WORK" && npm pack --silent "node-linux-$ARCH@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$WORK/node" "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$WORK/node-linux-$ARCH-$NODE_VERSION.tgz" -C "$WORK/node" --strip-components=1
  install -m 0755 "$WORK/node/bin/node" "$root/usr/local/bin/node"
  tar -xzf "$WORK/npm-$NPM_VERSION.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # The unprivileged user the Dockerfile's runtime stage switches to, as in the node images.
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  chroot "$root" node --version >/dev/null || fail "the base's node does not run"
  # What an image needs no copy of: package caches and lists, docs, man pages, locales.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/var/log/*.log
  tar --numeric-owner -C "$root" -c . |
    "${PODMAN[@]}" import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["node"]' - "$BASE" >/dev/null 2>"$WORK/import.err" || {
    cat "$WORK/import.err" >&2
    fail "podman import"
  }
  rm -rf "$root" "$WORK/node"
}

if [ -n "${GATEHOUSE_CI_REBUILD_BASE:-}" ] || ! "${PODMAN[@]}" image exists "$BASE"; then
  build_base
else
  say "reusing the base $BASE"
fi

# --- The image: the repository's Dockerfile, unchanged, on that base. -----------------------------
# --format docker keeps the HEALTHCHECK (the OCI format has no such field); the layer cache makes a
# rebuild with the same package-lock.json skip `npm ci`.
# A machine whose HTTPS goes through a proxy with its own CA trusts it through NODE_EXTRA_CA_CERTS;
# `npm ci` in the build then needs it too. Given to the build's RUN steps only, as a mounted npmrc
# (`cafile`: Node's own roots and that CA), so no layer of the image keeps it.
BUILD_OPTS=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$NODE_EXTRA_CA_CERTS" ]; then
  node -p "require('tls').rootCertificates.join('\n')" >"$WORK/ca.pem"
  cat "$NODE_EXTRA_CA_CERTS" >>"$WORK/ca.pem"
  echo "cafile=/run/gatehouse-ci/ca.pem" >"$WORK/npmrc"
  BUILD_OPTS+=(-v "$WORK/ca.pem:/run/gatehouse-ci/ca.pem:ro" -v "$WORK/npmrc:/root/.npmrc:ro")
  say "the build's npm trusts NODE_EXTRA_CA_CERTS too (mounted for the build only)"
fi
say "building $IMAGE from the Dockerfile (--build-arg BASE=$BASE)"
"${PODMAN[@]}" build --network host --format docker --layers "${BUILD_OPTS[@]}" \
  --build-arg "BASE=$BASE" -t "$IMAGE" -f Dockerfile . >"$WORK/build.log" 2>&1 || {
  tail -40 "$WORK/build.log"
  fail "podman build"
}
say "built: $(grep -c '^--> Using cache' "$WORK/build.log" || true) of $(grep -c '^\[[0-9]/[0-9]\] STEP' "$WORK/build.log" || true) steps from the layer cache"
SIZE="$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")"
say "built $IMAGE: $((SIZE / 1000000)) MB ($("${PODMAN[@]}" image inspect --format '{{.Size}}' "$BASE" | awk '{printf "%d", $1/1000000}') MB of it the base)"
[ "$("${PODMAN[@]}" image inspect --format '{{.Config.User}}' "$IMAGE")" = node ] || fail "the image does not run as user node"
"${PODMAN[@]}" image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE" | grep -q '/health/detailed' ||
  fail "the image has no HEALTHCHECK on /health/detailed"

free_port() {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# podman run with host networking (no CNI here); the image's user and entry point as they are. No
# systemd runs here to time the HEALTHCHECK: one-off commands have none, and `serve`'s is run by
# hand (`podman healthcheck run`). A one-off's stderr goes to a file, shown when it fails.
ctr() { "${PODMAN[@]}" run --network host "$@"; }
cli() { ctr --rm --no-healthcheck "$@" 2>"$WORK/cli.err" || { cat "$WORK/cli.err" >&2; return 1; }; }

# One run of the image on a database: $1 label, then the `podman run` options that choose it.
exercise() {
  local label="$1"
  shift
  local port name url email password out status token
  port="$(free_port)"
  name="gatehouse-ci-$label-$RUN_ID"
  url="http://127.0.0.1:$port"
  email="ops-$label@example.com"
  password="container check $label passphrase $RUN_ID"
  local opts=("$@" -e "PORT=$port" -e "PUBLIC_URL=$url" -e LOG_LEVEL=warn)

  say "$label: migrate"
  out="$(cli "${opts[@]}" "$IMAGE" migrate)" || fail "$label: migrate"
  echo "  $out"
  [[ "$out" == "applied "* ]] || fail "$label: migrate on an empty database applied nothing"
  out="$(cli "${opts[@]}" "$IMAGE" migrate)" || fail "$label: second migrate"
  [ "$out" = "database is up to date" ] || fail "$label: a second migrate said: $out"

  say "$label: create-admin --email $email"
  out="$(cli "${opts[@]}" -e "ADMIN_PASSWORD=$password" "$IMAGE" create-admin --email "$email")" ||
    fail "$label: create-admin"
  echo "  $out"

  say "$label: serve (non-root), until ready"
  CONTAINERS+=("$name")
  ctr -d --name "$name" --health-interval disable "${opts[@]}" "$IMAGE" >/dev/null 2>>"$WORK/podman.err"
  [ "$("${PODMAN[@]}" exec "$name" id -u)" != 0 ] || fail "$label: the service runs as root"
  for _ in $(seq 1 240); do
    status="$(curl -s -o /dev/null -w '%{http_code}' "$url/health/detailed" || true)"
    [ "$status" = 200 ] && break
    [ "$("${PODMAN[@]}" inspect --format '{{.State.Running}}' "$name")" = true ] || {
      "${PODMAN[@]}" logs "$name" | tail -30
      fail "$label: the container stopped before it was ready"
    }
    sleep 0.5
  done
  [ "$status" = 200 ] || {
    "${PODMAN[@]}" logs "$name" | tail -30
    fail "$label: /health/detailed answered $status, not 200"
  }
  # The image's own HEALTHCHECK command, run in the container (`podman exec`) as the engine runs it,
  # without its 3 s timeout: `podman exec` alone takes seconds on a loaded machine, and this checks
  # the command, not the machine's speed.
  local check=()
  mapfile -t check < <("${PODMAN[@]}" image inspect --format '{{json .Config.Healthcheck.Test}}' "$IMAGE" |
    node -e "const t = JSON.parse(require('fs').readFileSync(0, 'utf8')); if (t[0] !== 'CMD') process.exit(1); for (const a of t.slice(1)) console.log(a)")
  [ "${#check[@]}" -gt 0 ] || fail "the image's HEALTHCHECK is not a CMD"
  "${PODMAN[@]}" exec "$name" "${check[@]}" || fail "$label: the image's HEALTHCHECK command fails"
  echo "  /health/detailed 200, the HEALTHCHECK command exits 0, uid $("${PODMAN[@]}" exec "$name" id -u)"

  say "$label: POST /api/v1/login, then GET /api/v1/users with its token"
  out="$(curl -s -w '\n%{http_code}' "$url/api/v1/login" -H 'content-type: application/json' \
    -d "{\"email\":\"$email\",\"password\":\"$password\"}")"
  [ "${out##*$'\n'}" = 200 ] || fail "$label: login answered ${out##*$'\n'}: ${out%$'\n'*}"
  token="$(printf '%s' "${out%$'\n'*}" | node -e "
    const r = JSON.parse(require('fs').readFileSync(0, 'utf8'));
    if (r.token_type !== 'Bearer' || r.user.role !== 'admin') process.exit(1);
    console.log(r.access_token)")" || fail "$label: the login's answer is not an admin's token"
  out="$(curl -s -w '\n%{http_code}' "$url/api/v1/users?limit=20" -H "authorization: Bearer $token")"
  [ "${out##*$'\n'}" = 200 ] || fail "$label: GET /api/v1/users answered ${out##*$'\n'}"
  [[ "$out" == *"\"$email\""* ]] || fail "$label: the admin is not in GET /api/v1/users"
  echo "  login 200 (role admin), GET /api/v1/users 200"

  say "$label: stop (SIGTERM)"
  "${PODMAN[@]}" stop -t 15 "$name" >/dev/null 2>>"$WORK/podman.err"
  status="$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$name")"
  [ "$status" = 0 ] || {
    "${PODMAN[@]}" logs "$name" | tail -30
    fail "$label: exit code $status after SIGTERM, not 0"
  }
  # -v: the image's VOLUME gave a run without one (PostgreSQL) an anonymous volume; it goes too.
  "${PODMAN[@]}" rm -v "$name" >/dev/null 2>>"$WORK/podman.err"
}

# Both runs with a read-only root filesystem, as deploy/kubernetes/ asks (readOnlyRootFilesystem):
# the service writes only to its database (podman keeps /tmp writable, as the manifests' emptyDir).
# SQLite: the image's default DATABASE_URL, on a named volume at /app/data (owned by `node`).
"${PODMAN[@]}" volume create "$VOLUME" >/dev/null
exercise sqlite --read-only -v "$VOLUME:/app/data"
# The data outlived the container: a one-off CLI run on the volume finds the admin.
out="$(cli --read-only -v "$VOLUME:/app/data" "$IMAGE" users export)" || fail "sqlite: users export"
[[ "$out" == *'"ops-sqlite@example.com"'* ]] || fail "sqlite: the admin is not in the volume after the container stopped"
say "sqlite: the volume kept the data (users export finds the admin)"

# PostgreSQL: a fresh database on the host's server (host networking reaches 127.0.0.1).
psql "$PG_URL/postgres" -v ON_ERROR_STOP=1 -qc "create database $PG_DB" >/dev/null ||
  fail "cannot create the PostgreSQL database $PG_DB at $PG_URL"
exercise postgres --read-only -e "DATABASE_URL=$PG_URL/$PG_DB" -e "SECRETS_KEY=$(node -p "require('crypto').randomBytes(32).toString('base64')")"

say "passed: image $((SIZE / 1000000)) MB, SQLite (volume) and PostgreSQL, in $(($(date +%s) - T0))s"
