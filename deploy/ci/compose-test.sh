#!/usr/bin/env bash
# npm run compose:test: builds the Capstan image from deploy/Dockerfile, starts deploy/docker-compose.yml
# with the real Docker Compose CLI against podman's Docker-compatible API, runs the guestbook story
# through the published ports (scripts/demo/compose-story.ts), then `down -v` and checks that no
# container, volume or network is left.
#
# On machines that pull no public image: podman (runc, cgroupfs; deploy/ci/containers.conf through
# CONTAINERS_CONF, the machine's /etc/containers untouched), local stand-ins for the public images
# (deploy/ci/images/: debootstrapped Debian 12 + this machine's Node.js; PostgreSQL and NATS from
# Debian's packages; kube-apiserver + etcd for k3s, through deploy/ci/compose.ci.yml), the compose
# CLI built from its Go module (test/scripts/obtain-compose.sh). Every image is tagged with a hash
# of what it is built from and reused while that tag exists; the figures go to
# bench/results/image.json.
#
# Environment: CAPSTAN_CI_PORT_BASE (default 18000: api HTTP +80, gRPC +83, cluster +443), far from
# npm run up's fixed ports; CAPSTAN_CI_KEEP=1 leaves the stack running (then down it by hand).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
started=$SECONDS
say() { printf 'compose:test %4ss  %s\n' "$((SECONDS - started))" "$*" >&2; }

# --- tools ---------------------------------------------------------------------------------------
packages=(podman runc debootstrap netavark aardvark-dns iptables uidmap openssl)
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  say "installing ${packages[*]} from Debian's packages"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    "${packages[@]}" >/dev/null
fi
export CONTAINERS_CONF="$root/deploy/ci/containers.conf"
export PATH="$PATH:/usr/local/go/bin"
compose_bin=$(bash test/scripts/obtain-compose.sh --print-path)
kube_dir=$(bash test/scripts/obtain-kube-binaries.sh --print-dir)
kustomize_bin=$(bash test/scripts/obtain-kustomize.sh --print-path)
helm_bin=$(bash test/scripts/obtain-helm.sh --print-path)
jsonnet_bin=$(bash test/scripts/obtain-jsonnet.sh --print-path)
gotemplate_dir=$(bash libs/appset/scripts/build-gotemplate.sh --print-path)
say "tools ready: $("$compose_bin" version --short 2>/dev/null || "$compose_bin" version), podman $(podman --version | awk '{ print $3 }')"

# The CLI and the test helpers the story runs on the host (turbo: a no-op when built).
npx --no-install turbo run build --filter=@capstan/cli... --filter=@capstan/test... >"${TMPDIR:-/tmp}/capstan-compose-test-build.log" 2>&1 \
  || { tail -30 "${TMPDIR:-/tmp}/capstan-compose-test-build.log" >&2; exit 1; }

# --- images --------------------------------------------------------------------------------------
source deploy/ci/images.sh
timings=()
debian=$(ci_debian_image)
# The CA bundle Node.js trusts on this machine (NODE_EXTRA_CA_CERTS, else the system's).
machine_ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
node_image=$(ci_image node "$debian" "node=/usr/bin/node" "npm=/usr/lib/node_modules/npm" "machine-ca.crt=$machine_ca")
postgres_image=$(ci_image postgres "$debian")
nats_image=$(ci_image nats "$debian")
kube_image=$(ci_image kube "$debian" "kube-apiserver=$kube_dir/kube-apiserver" "etcd=$kube_dir/etcd")
tools_image=$(ci_image tools "" "kustomize=$kustomize_bin" "helm=$helm_bin" "capstan-jsonnet=$jsonnet_bin" "gotemplate=$gotemplate_dir")
capstan_image=$(ci_capstan_image "$node_image" "$tools_image")
say "images: $capstan_image, $node_image, $postgres_image, $nats_image, $kube_image"

# --- the stack -----------------------------------------------------------------------------------
work=$(mktemp -d /tmp/capstan-compose-test.XXXXXX)
service_pid= health_pid=
cleanup() {
  local rc=$?
  if [[ "${CAPSTAN_CI_KEEP:-0}" != 1 ]]; then
    [[ -n $health_pid ]] && kill "$health_pid" 2>/dev/null
    "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
    [[ -n $service_pid ]] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
    rm -rf "$work"
  fi
  exit $rc
}
trap cleanup EXIT
podman system service --time=0 "unix://$work/podman.sock" >"$work/podman-service.log" 2>&1 &
service_pid=$!
for _ in $(seq 1 50); do [[ -S $work/podman.sock ]] && break; sleep 0.2; done
export DOCKER_HOST="unix://$work/podman.sock"

bash deploy/generate-secrets.sh --out "$work/deploy" 2>/dev/null
base=${CAPSTAN_CI_PORT_BASE:-18000}
export COMPOSE_PROJECT_NAME=capstan-ci CAPSTAN_IMAGE="$capstan_image" CAPSTAN_PKI_DIR="$work/deploy/pki"
export CAPSTAN_PUBLISH_API_HTTP="127.0.0.1:$((base + 80))" CAPSTAN_PUBLISH_API_GRPC="127.0.0.1:$((base + 83))"
export CAPSTAN_PUBLISH_K3S="127.0.0.1:$((base + 443))"
export CAPSTAN_CI_API_IMAGE="${capstan_image/capstan:/capstan-api:}"
export CAPSTAN_CI_NATS_IMAGE="$nats_image" CAPSTAN_CI_POSTGRES_IMAGE="$postgres_image" CAPSTAN_CI_KUBE_IMAGE="$kube_image"
export CAPSTAN_CI_KUBE_ADMIN_TOKEN=$(openssl rand -hex 32)
export CAPSTAN_CI_GIT_USERNAME=team-a-reader CAPSTAN_CI_GIT_PASSWORD=$(openssl rand -hex 16)
export CAPSTAN_CI_GIT_CONTENT="$root/scripts/demo/repo" CAPSTAN_CI_GIT_SERVER="$root/deploy/ci/git-server.mjs"
compose=("$compose_bin" --env-file "$work/deploy/.env" -f deploy/docker-compose.yml -f deploy/ci/compose.ci.yml)

# What the image promises, checked on the running containers rather than read from the Dockerfile: the
# api (slim image, CAPSTAN_CI_API_IMAGE) and repo (generic image) run as 10001:10001 on a read-only root
# file system with tini as PID 1; the slim image has no shell (the generic one has /bin/sh, for git),
# and it serves the story as the api.
assert_image_properties() {
  local service c user ro path uid written slim_sh
  for service in api repo; do
    c=$(podman ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
      --filter "label=com.docker.compose.service=$service")
    [[ -n $c ]] || { echo "compose:test: no $service container" >&2; return 1; }
    user=$(podman inspect --format '{{.Config.User}}' "$c")
    ro=$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$c")
    path=$(podman inspect --format '{{.Path}}' "$c")
    # What the process itself is and may do (no shell in the image: node answers).
    uid=$(podman exec "$c" node -e 'process.stdout.write(`${process.getuid()}:${process.getgid()}`)')
    written=$(podman exec "$c" node -e 'try { require("node:fs").writeFileSync("/probe", ""); process.stdout.write("written") } catch (e) { process.stdout.write(e.code) }')
    if [[ $user != 10001:10001 || $uid != 10001:10001 || $ro != true || $written != EROFS || $path != /usr/bin/tini ]]; then
      echo "compose:test: $service container: User=$user (process $uid), ReadonlyRootfs=$ro (write to /: $written), entrypoint $path; expected 10001:10001, true (EROFS), /usr/bin/tini" >&2
      return 1
    fi
  done
  # No shell in the slim image: the run fails because /bin/sh does not exist (the generic image, which
  # has one, runs the same command, so the failure is the missing file and nothing else).
  if slim_sh=$(podman run --rm --network none --entrypoint /bin/sh "$CAPSTAN_CI_API_IMAGE" -c true 2>&1); then
    echo "compose:test: $CAPSTAN_CI_API_IMAGE runs /bin/sh" >&2
    return 1
  fi
  if [[ ${slim_sh,,} != *"no such file or directory"* ]]; then
    echo "compose:test: /bin/sh in $CAPSTAN_CI_API_IMAGE failed otherwise than missing: $slim_sh" >&2
    return 1
  fi
  podman run --rm --network none --entrypoint /bin/sh "$CAPSTAN_IMAGE" -c true \
    || { echo "compose:test: the generic image's /bin/sh does not run either" >&2; return 1; }
  say "api (slim image) and repo (generic) run as 10001:10001, read-only root, tini; the slim image has no /bin/sh"
}

# podman runs health checks from systemd timers, and these machines have no systemd: run them here,
# every 2 s, for every container of the project that has one (what the timers would do).
(
  while true; do
    for c in $(podman ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME"); do
      podman healthcheck run "$c" >/dev/null 2>&1 || true
    done
    sleep 2
  done
) &
health_pid=$!

say "docker compose up --wait (project $COMPOSE_PROJECT_NAME; api on $CAPSTAN_PUBLISH_API_GRPC)"
up_start=$SECONDS
if ! "${compose[@]}" up -d --wait --wait-timeout 300 >"$work/up.log" 2>&1; then
  cat "$work/up.log" >&2
  "${compose[@]}" ps -a >&2 || true
  "${compose[@]}" logs --tail 40 >&2 || true
  exit 1
fi
up_seconds=$((SECONDS - up_start))
say "every service healthy in ${up_seconds}s"
"${compose[@]}" ps --format 'table {{.Service}}\t{{.Status}}\t{{.Ports}}' >&2

assert_image_properties

"${compose[@]}" exec -T k3s cat /var/lib/kube/pki/ca.crt >"$work/kube-ca.crt"
story_start=$SECONDS
env CAPSTAN_PROGRESS_LABEL='compose story' CAPSTAN_CONFIG="$work/cli-config" CAPSTAN_CI_WORK="$work" CAPSTAN_CI_API="$CAPSTAN_PUBLISH_API_GRPC" \
  CAPSTAN_DEMO_SERVER_CRT="$work/deploy/pki/ca.crt" \
  CAPSTAN_CI_ADMIN_PASSWORD="$(sed -n 's/^CAPSTAN_ADMIN_PASSWORD=//p' "$work/deploy/.env")" \
  CAPSTAN_CI_KUBE_SERVER="https://$CAPSTAN_PUBLISH_K3S" CAPSTAN_CI_KUBE_CA_FILE="$work/kube-ca.crt" \
  CAPSTAN_CI_AUDIT_CMD="$(node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "${compose[@]}" exec -T k3s cat /var/lib/kube/audit.log)" \
  npx --no-install tsx scripts/demo/compose-story.ts || {
  "${compose[@]}" logs --tail 60 repo api sync >&2 || true
  exit 1
}
story_seconds=$((SECONDS - story_start))

if [[ "${CAPSTAN_CI_KEEP:-0}" == 1 ]]; then
  say "CAPSTAN_CI_KEEP=1: the stack keeps running; to look around and stop it:"
  echo "  export CONTAINERS_CONF=$CONTAINERS_CONF DOCKER_HOST=$DOCKER_HOST COMPOSE_PROJECT_NAME=$COMPOSE_PROJECT_NAME"
  echo "  ${compose[*]} ps    # ... down -v; then kill $service_pid (podman system service); rm -rf $work"
  exit 0
fi
say "docker compose down -v"
"${compose[@]}" down -v --remove-orphans >/dev/null 2>&1
left=$(podman ps -aq --filter "label=com.docker.compose.project=capstan-ci"; podman volume ls -q --filter "label=com.docker.compose.project=capstan-ci"; podman network ls -q --filter "label=com.docker.compose.project=capstan-ci")
if [[ -n $left ]]; then
  echo "compose:test: down -v left: $left" >&2
  exit 1
fi
say "down -v left no container, volume or network"
ci_report "$capstan_image" "$up_seconds" "$story_seconds"
say "passed in $((SECONDS - started))s"
