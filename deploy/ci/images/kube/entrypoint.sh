#!/bin/sh
# First start: a CA, the serving certificate (names k3s, as the compose file's cluster is reached,
# and 127.0.0.1 for the published port), the ServiceAccount signing key and the audit policy, all
# in /var/lib/kube (a volume). Every start: etcd in the background, kube-apiserver in the foreground.
# The admin (system:masters) token comes from KUBE_ADMIN_TOKEN; every other identity is a
# ServiceAccount (tokens through the TokenRequest API).
set -eu
: "${KUBE_ADMIN_TOKEN:?KUBE_ADMIN_TOKEN is required}"
d=/var/lib/kube
mkdir -p "$d/pki" && cd "$d/pki"
if [ ! -s sa.key ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=capstan-ci-kube-ca \
    -keyout ca.key -out ca.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=DNS:k3s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.96.0.1\n' >san.ext
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile san.ext \
    -out server.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  chmod 644 ca.crt
fi
printf '%s,capstan-admin,capstan-admin-uid,"system:masters"\n' "$KUBE_ADMIN_TOKEN" >"$d/tokens.csv"
cat >"$d/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: [system:apiserver]
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
  - level: Metadata
POLICY
etcd --name ci --data-dir "$d/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
  --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster ci=http://127.0.0.1:2380 \
  --log-level warn >"$d/etcd.log" 2>&1 &
exec kube-apiserver --etcd-servers=http://127.0.0.1:2379 --bind-address=0.0.0.0 --secure-port=6443 \
  --tls-cert-file="$d/pki/server.crt" --tls-private-key-file="$d/pki/server.key" \
  --client-ca-file="$d/pki/ca.crt" --token-auth-file="$d/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-signing-key-file="$d/pki/sa.key" --service-account-key-file="$d/pki/sa.pub" \
  --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
  --audit-policy-file="$d/audit-policy.yaml" --audit-log-path="$d/audit.log" --audit-log-format=json \
  --audit-log-mode=blocking --enable-priority-and-fairness=false --profiling=false --v=1
