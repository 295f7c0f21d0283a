#!/bin/sh
# One-shot of the temporal-setup service (temporalio/admin-tools), and the same step of
# ./flashsale cluster: waits until the Temporal frontend answers, creates the namespace (retention
# TEMPORAL_NAMESPACE_RETENTION, 72h) unless it exists, then registers the custom search attributes the order workflow upserts, all Keyword, and checks they
# are listed. An order workflow that upserts an unregistered attribute fails its workflow tasks,
# so the api and the workers start only after this has exited 0. Safe to run again.
set -eu
ADDRESS=${TEMPORAL_ADDRESS:-temporal:7233}
NAMESPACE=${TEMPORAL_NAMESPACE:-default}
RETENTION=${TEMPORAL_NAMESPACE_RETENTION:-72h}
ATTEMPTS=${SETUP_ATTEMPTS:-90}

wait_for() { # wait_for WHAT COMMAND...
  what=$1
  shift
  n=1
  until "$@" >/dev/null 2>&1; do
    if [ "$n" -ge "$ATTEMPTS" ]; then
      echo "temporal-setup: gave up waiting for $what" >&2
      exit 1
    fi
    echo "temporal-setup: waiting for $what ($n/$ATTEMPTS)"
    n=$((n + 1))
    sleep 2
  done
}

listed() { # listed NAME: is NAME among the namespace's search attributes?
  temporal operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE" | grep -qw "$1"
}

register() { # register NAME TYPE
  if listed "$1"; then
    echo "temporal-setup: $1 already registered"
  else
    temporal operator search-attribute create --address "$ADDRESS" --namespace "$NAMESPACE" \
      --name "$1" --type "$2"
    echo "temporal-setup: registered $1 ($2)"
  fi
}

wait_for "Temporal at $ADDRESS" temporal operator cluster health --address "$ADDRESS"
if temporal operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "temporal-setup: namespace $NAMESPACE exists"
else
  temporal operator namespace create --address "$ADDRESS" --namespace "$NAMESPACE" --retention "$RETENTION"
  echo "temporal-setup: created namespace $NAMESPACE (retention $RETENTION)"
fi
wait_for "namespace $NAMESPACE" temporal operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE"
# a namespace just created is served once the frontend's namespace cache has it
wait_for "search attributes of $NAMESPACE" \
  temporal operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE"

register OrderId Keyword
register OrderStatus Keyword
register Sku Keyword
register Tenant Keyword
register OrderAttention Keyword
register ReconcileOutcome Keyword

for name in OrderId OrderStatus Sku Tenant OrderAttention ReconcileOutcome; do
  wait_for "search attribute $name to be listed" listed "$name"
done
echo "temporal-setup: search attributes OrderId, OrderStatus, Sku, Tenant, OrderAttention, ReconcileOutcome registered in namespace $NAMESPACE"
