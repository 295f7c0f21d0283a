#!/bin/sh
# make-certs.sh DIR: the deployment's own certificates for the Temporal frontend's mutual TLS
# (docs/DESIGN.md §Trust boundaries). Run by ./flashsale cluster into its data directory, and once by
# hand before `docker compose up` (docker/README.md). Keeps what is still valid: safe to run again;
# a certificate that no longer chains to the CA or expires within 30 days is made again.
#
#   ca.pem                     the deployment's CA: the only issuer the frontend admits
#   private/ca.key             its key: signs nothing after this script; mounted nowhere
#   server.pem / server.key    the Temporal server (frontend and internode; names temporal,
#                              localhost, 127.0.0.1), also its client certificate between services
#   service.pem / .key         the API and the workers
#   operator.pem / .key        an operator's temporal CLI
#   web-ui.pem / .key          the Web UI server
#
# A client without one of these certificates is refused in the TLS handshake, before any call.
# DIR is owner-only. The keys are too, unless KEYS_READABLE=1: compose mounts each key file into
# its container, whose user is not the owner; DIR itself stays closed to other host users.
set -eu
DIR=${1:?usage: make-certs.sh DIR}
DAYS=${CERT_DAYS:-825}
command -v openssl >/dev/null || { echo "make-certs.sh needs openssl" >&2; exit 1; }
umask 077
mkdir -p "$DIR/private"
chmod 700 "$DIR" "$DIR/private"
cd "$DIR"
RENEW_SECONDS=2592000 # 30 days

new_key() { # new_key FILE: an EC P-256 key, PKCS#8 PEM (what Go, Netty and the CLI read)
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.partial" 2>/dev/null
  mv "$1.partial" "$1"
}

if [ ! -f ca.pem ] || [ ! -f private/ca.key ] || ! openssl x509 -checkend "$RENEW_SECONDS" -noout -in ca.pem >/dev/null; then
  new_key private/ca.key
  openssl req -x509 -new -key private/ca.key -sha256 -days "$DAYS" -subj "/CN=flashsale Temporal CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out ca.pem.partial
  mv ca.pem.partial ca.pem
fi

valid() { # valid NAME: its key and a certificate that chains to this CA and is not about to expire
  [ -f "$1.key" ] && [ -f "$1.pem" ] \
    && openssl verify -CAfile ca.pem "$1.pem" >/dev/null 2>&1 \
    && openssl x509 -checkend "$RENEW_SECONDS" -noout -in "$1.pem" >/dev/null
}

issue() { # issue NAME EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
  name=$1
  valid "$name" && return 0
  new_key "$name.key"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyAgreement"
    echo "extendedKeyUsage=$2"
    [ -n "${3:-}" ] && echo "subjectAltName=$3"
  } > "$name.ext"
  openssl req -new -key "$name.key" -subj "/CN=$name" -out "$name.csr"
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey private/ca.key -CAserial private/ca.srl -CAcreateserial \
    -days "$DAYS" -sha256 -extfile "$name.ext" -out "$name.pem.partial" 2>/dev/null
  mv "$name.pem.partial" "$name.pem"
  rm -f "$name.csr" "$name.ext"
}

issue server serverAuth,clientAuth "DNS:temporal,DNS:localhost,IP:127.0.0.1"
for client in service operator web-ui; do
  issue "$client" clientAuth
done
chmod 644 ./*.pem
if [ "${KEYS_READABLE:-0}" = 1 ]; then
  chmod 644 server.key service.key operator.key web-ui.key
else
  chmod 600 server.key service.key operator.key web-ui.key
fi
echo "certificates in $(pwd): ca, server, service, operator, web-ui (the CA's key in private/)"
