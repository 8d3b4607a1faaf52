#!/usr/bin/env bash
# Creates the test cluster's PKI with openssl into $1 (e.g. .cluster/pki):
#   ca            cluster CA: signs every serving and client cert below, and kcm's CSR signer
#   front-proxy-ca  separate CA for the aggregation layer (metrics-server's APIService)
#   apiserver     serving cert; SANs cover 127.0.0.1, the Service IP 10.96.0.1 and kubernetes.default...
#   apiserver-kubelet-client  the apiserver's identity towards kubelets (O=system:masters)
#   admin         client cert, O=system:masters (the kubeconfig handed to users and tests)
#   kcm, scheduler  client certs with the identities RBAC's default bindings expect
#   kwok          O=system:masters, clientAuth+serverAuth with SAN 127.0.0.1: kwok both talks to the
#                 apiserver and serves the fake kubelet endpoints (metrics) that metrics-server scrapes;
#                 metrics-server reuses it as its own serving cert
#   front-proxy-client  the apiserver's identity towards aggregated APIs
#   sa            RSA key pair that signs and verifies service-account tokens
# Everything is throw-away (one cluster run), so keys are unencrypted and valid for a year.
set -euo pipefail
dir=${1:?usage: pki.sh DIR}
mkdir -p "$dir"
cd "$dir"
days=365
# openssl writes a .rnd file and chatty output; keep the directory and the terminal clean.
export RANDFILE=/dev/null

ca() { # name cn
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$days" -keyout "$1.key" -out "$1.crt" \
    -subj "/CN=$2" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
}

cert() { # name subject signing-ca extendedKeyUsage [subjectAltName]
  local name=$1 subj=$2 signer=$3 eku=$4 san=${5:-}
  local ext="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=$eku"
  [ -n "$san" ] && ext="$ext
subjectAltName=$san"
  openssl req -new -newkey rsa:2048 -nodes -sha256 -keyout "$name.key" -out "$name.csr" -subj "$subj" 2>/dev/null
  openssl x509 -req -sha256 -days "$days" -in "$name.csr" -CA "$signer.crt" -CAkey "$signer.key" \
    -CAcreateserial -out "$name.crt" -extfile <(printf '%s\n' "$ext") 2>/dev/null
  rm -f "$name.csr"
}

ca ca onto-testcluster-ca
ca front-proxy-ca onto-testcluster-front-proxy-ca
cert apiserver /CN=kube-apiserver ca serverAuth \
  "IP:127.0.0.1,IP:${ONTO_TESTCLUSTER_APISERVER_IP:-127.0.0.1},IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin "/O=system:masters/CN=onto-admin" ca clientAuth
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" ca clientAuth
cert kcm /CN=system:kube-controller-manager ca clientAuth
cert scheduler /CN=system:kube-scheduler ca clientAuth
cert kwok "/O=system:masters/CN=kwok" ca clientAuth,serverAuth "IP:127.0.0.1,DNS:localhost"
cert front-proxy-client /CN=front-proxy-client front-proxy-ca clientAuth
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
rm -f ./*.srl
chmod 600 ./*.key
