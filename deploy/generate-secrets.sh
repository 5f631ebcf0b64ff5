#!/usr/bin/env bash
# Generates fresh secrets for a Capstan deployment, consistently for both ways of running it:
#   deploy/.env                      docker compose (read by deploy/docker-compose.yml)
#   deploy/pki/                      the internal CA and each service's certificate (public, mode 644,
#                                    mounted by compose; the keys travel in .env), CA key mode 600
#   deploy/k8s/secrets/<service>.env kustomize's secretGenerator (deploy/k8s/kustomization.yaml)
# None is committed (deploy/.gitignore). Existing files are kept unless --force is given, since
# replacing the encryption keys makes the credentials already sealed in PostgreSQL unreadable.
#
# Usage: [CAPSTAN_DEPLOY_DATABASE_URL=...] deploy/generate-secrets.sh [--force] [--out DIR]
#   --out DIR       write .env, pki/ and k8s/secrets/ under DIR instead of deploy/ (npm run
#                   compose:test uses a scratch directory; docker compose --env-file DIR/.env and
#                   CAPSTAN_PKI_DIR=DIR/pki then point the compose file at them)
#   CAPSTAN_DEPLOY_DATABASE_URL  the PostgreSQL URL the kustomize secrets hand the services; from the
#                   environment, never a flag, since it holds a password and argv is visible to every
#                   user of the machine (default: capstan-pg-rw, the HA variant's CloudNativePG
#                   cluster, deploy/k8s-ha; replace it for a PostgreSQL of your own)
# Needs openssl. Files are written mode 600.
set -euo pipefail
out="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

force=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --force) force=1 ;;
    --out) mkdir -p "$2" && out="$(cd "$2" && pwd)"; shift ;;
    *) echo "usage: [CAPSTAN_DEPLOY_DATABASE_URL=...] $0 [--force] [--out DIR]" >&2; exit 64 ;;
  esac
  shift
done
cd "$out"

for f in .env pki/ca.key k8s/secrets/tls k8s/secrets/api.env k8s/secrets/repo.env k8s/secrets/sync.env k8s/secrets/appset.env k8s/secrets/nats.env k8s-ha/secrets/postgres.env; do
  if [[ -e $f && $force == 0 ]]; then
    echo "deploy/$f exists; keeping every secret (rerun with --force to replace them all)" >&2
    exit 1
  fi
done

token() { openssl rand -hex 32; }                      # 64 characters (services want at least 32)
key32() { openssl rand -base64 32 | tr -d '\n'; }      # AES-256 / HMAC key, base64 of 32 bytes
keyring() { printf '{"active":"k1","keys":{"k1":"%s"}}' "$(key32)"; }

postgres_password=$(openssl rand -hex 24)               # hex: safe inside a URL without escaping
admin_password=$(openssl rand -base64 18 | tr '+/' '-_')
signing_key=$(key32)
api_keyring=$(keyring)
repo_keyring=$(keyring)
sync_to_api=$(token)
appset_to_api=$(token)
api_to_repo=$(token)
sync_to_repo=$(token)
appset_to_repo=$(token)
api_to_appset=$(token)
api_to_sync=$(token)
k3s_token=$(token)
# Bus passwords (deploy/nats/nats-server.conf reads them as $NATS_PASSWORD_<USER>). nats-server parses
# a variable's value as a config value: one that starts with a digit is read as a number and the
# server refuses to start, so each starts with a letter.
nats_token() { printf 'n%s' "$(token)"; }
nats_api=$(nats_token); nats_sync=$(nats_token); nats_repo=$(nats_token); nats_appset=$(nats_token)
nats_ext_git=$(nats_token); nats_admin=$(nats_token)
# The api's Ed25519 delegation key pair: the api signs, repo, sync and appset verify.
delegation_key=$(openssl genpkey -algorithm ed25519)
delegation_public_key=$(openssl pkey -pubout <<<"$delegation_key")
# Default: the read-write Service of the HA variant's CloudNativePG cluster (deploy/k8s-ha), whose
# owner password is the same postgres_password (k8s/secrets/postgres.env).
database_url=${CAPSTAN_DEPLOY_DATABASE_URL:-postgres://capstan:${postgres_password}@capstan-pg-rw:5432/capstan}

umask 077
mkdir -p k8s/secrets

# The internal PKI (docs/deploying.md, "Internal gRPC"): an EC CA and one certificate per service
# whose SAN names spiffe://capstan/<service>, its compose name and its kustomize Service name. The
# certificates and the directory are world-readable (the services read them as uid 10001 through a
# bind mount); every private key stays mode 600 and reaches its service as CAPSTAN_TLS_KEY.
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
rm -rf pki && mkdir -p pki && chmod 755 pki
openssl req -x509 "${ec[@]}" -keyout pki/ca.key -out pki/ca.crt -days 825 -subj /CN=capstan-internal-ca \
  -addext basicConstraints=critical,CA:TRUE,pathlen:0 -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
declare -A tls_key
for service in api repo sync appset; do
  printf '%s\n' basicConstraints=critical,CA:FALSE keyUsage=critical,digitalSignature \
    extendedKeyUsage=serverAuth,clientAuth \
    "subjectAltName=URI:spiffe://capstan/${service},DNS:${service},DNS:capstan-${service},DNS:localhost,IP:127.0.0.1" \
    >"pki/${service}.ext"
  openssl req "${ec[@]}" -keyout "pki/${service}.key" -out "pki/${service}.csr" -subj "/CN=${service}" 2>/dev/null
  openssl x509 -req -in "pki/${service}.csr" -CA pki/ca.crt -CAkey pki/ca.key -CAcreateserial -days 825 \
    -extfile "pki/${service}.ext" -out "pki/${service}.crt" 2>/dev/null
  tls_key[$service]=$(cat "pki/${service}.key")
  rm -f "pki/${service}.csr" "pki/${service}.ext"
done
chmod 644 pki/*.crt
# PEM in .env: double quotes with \n, which compose turns back into newlines.
pem() { awk 'BEGIN { ORS = "" } { print $0 "\\n" }' <<<"$1"; }

# docker compose: single quotes keep the JSON keyrings literal.
cat >.env <<ENV
# Generated by deploy/generate-secrets.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ). Do not commit.
POSTGRES_PASSWORD=${postgres_password}
CAPSTAN_ADMIN_PASSWORD=${admin_password}
CAPSTAN_AUTH_SIGNING_KEY=${signing_key}
CAPSTAN_API_ENCRYPTION_KEYS='${api_keyring}'
CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS='${repo_keyring}'
SYNC_TO_API_TOKEN=${sync_to_api}
APPSET_TO_API_TOKEN=${appset_to_api}
API_TO_REPO_TOKEN=${api_to_repo}
SYNC_TO_REPO_TOKEN=${sync_to_repo}
APPSET_TO_REPO_TOKEN=${appset_to_repo}
API_TO_APPSET_TOKEN=${api_to_appset}
API_TO_SYNC_TOKEN=${api_to_sync}
K3S_TOKEN=${k3s_token}
NATS_PASSWORD_API=${nats_api}
NATS_PASSWORD_SYNC=${nats_sync}
NATS_PASSWORD_REPO=${nats_repo}
NATS_PASSWORD_APPSET=${nats_appset}
NATS_PASSWORD_EXT_GIT=${nats_ext_git}
NATS_PASSWORD_ADMIN=${nats_admin}
CAPSTAN_TLS_KEY_API="$(pem "${tls_key[api]}")"
CAPSTAN_TLS_KEY_REPO="$(pem "${tls_key[repo]}")"
CAPSTAN_TLS_KEY_SYNC="$(pem "${tls_key[sync]}")"
CAPSTAN_TLS_KEY_APPSET="$(pem "${tls_key[appset]}")"
CAPSTAN_AUTH_DELEGATION_KEY="$(pem "$delegation_key")"
CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY="$(pem "$delegation_public_key")"
ENV

# kustomize: the same PKI and delegation key pair as files (secretGenerator reads files only from
# below the kustomization).
mkdir -p k8s/secrets/tls
cp pki/ca.crt k8s/secrets/tls/ca.crt
for service in api repo sync appset; do cp "pki/${service}.crt" "pki/${service}.key" k8s/secrets/tls/; done
printf '%s\n' "$delegation_key" >k8s/secrets/tls/delegation.key
printf '%s\n' "$delegation_public_key" >k8s/secrets/tls/delegation.pub

# kustomize env files: KEY=VALUE taken literally (no quotes), one file per service so that each
# Pod receives only its own secrets.
cat >k8s/secrets/api.env <<ENV
DATABASE_URL=${database_url}
CAPSTAN_ADMIN_PASSWORD=${admin_password}
CAPSTAN_AUTH_SIGNING_KEY=${signing_key}
CAPSTAN_API_ENCRYPTION_KEYS=${api_keyring}
CAPSTAN_SERVICE_TOKENS=sync=${sync_to_api},appset=${appset_to_api}
CAPSTAN_REPO_SERVICE_TOKEN=${api_to_repo}
CAPSTAN_APPSET_SERVICE_TOKEN=${api_to_appset}
CAPSTAN_SYNC_SERVICE_TOKEN=${api_to_sync}
NATS_USER=api
NATS_PASSWORD=${nats_api}
ENV
cat >k8s/secrets/repo.env <<ENV
DATABASE_URL=${database_url}
CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS=${repo_keyring}
CAPSTAN_AUTH_SERVICE_TOKENS=api=${api_to_repo},sync=${sync_to_repo},appset=${appset_to_repo}
NATS_USER=repo
NATS_PASSWORD=${nats_repo}
ENV
cat >k8s/secrets/sync.env <<ENV
DATABASE_URL=${database_url}
CAPSTAN_API_SERVICE_TOKEN=${sync_to_api}
CAPSTAN_REPO_SERVICE_TOKEN=${sync_to_repo}
CAPSTAN_AUTH_SERVICE_TOKENS=api=${api_to_sync}
NATS_USER=sync
NATS_PASSWORD=${nats_sync}
ENV
cat >k8s/secrets/appset.env <<ENV
DATABASE_URL=${database_url}
CAPSTAN_AUTH_SERVICE_TOKENS=api=${api_to_appset}
CAPSTAN_API_SERVICE_TOKEN=${appset_to_api}
CAPSTAN_REPO_SERVICE_TOKEN=${appset_to_repo}
NATS_USER=appset
NATS_PASSWORD=${nats_appset}
ENV
# The PostgreSQL owner of the HA variant (CloudNativePG's bootstrap secret, basic-auth keys).
mkdir -p k8s-ha/secrets
cat >k8s-ha/secrets/postgres.env <<ENV
username=capstan
password=${postgres_password}
ENV
# The NATS server's own Secret (its environment): every bus user's password, for
# deploy/nats/nats-server.conf (configMap capstan-nats-config).
cat >k8s/secrets/nats.env <<ENV
NATS_PASSWORD_API=${nats_api}
NATS_PASSWORD_SYNC=${nats_sync}
NATS_PASSWORD_REPO=${nats_repo}
NATS_PASSWORD_APPSET=${nats_appset}
NATS_PASSWORD_EXT_GIT=${nats_ext_git}
NATS_PASSWORD_ADMIN=${nats_admin}
ENV

echo "wrote $PWD/.env, $PWD/pki/ and $PWD/k8s/secrets/{api,repo,sync,appset,nats}.env and $PWD/k8s-ha/secrets/postgres.env (mode 600)" >&2
