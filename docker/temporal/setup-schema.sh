#!/bin/sh
# Creates or upgrades the Temporal server's PostgreSQL schemas with its SQL tool: the persistence
# schema in `temporal`, the visibility schema in `temporal_visibility` (both databases exist
# already: postgres-init.sh, or ./flashsale cluster, creates them as the superuser). Run by
# docker/compose.yaml's `temporal-schema` service (temporalio/admin-tools) and by
# ./flashsale cluster (the tool and schemas of ./flashsale install-cluster) alike. Safe to run
# again: setup-schema -v 0.0 only creates the version tables, update-schema applies what is missing.
set -eu
SQL_TOOL=${SQL_TOOL:-temporal-sql-tool}
SCHEMA_DIR=${SCHEMA_DIR:-/etc/temporal/schema}
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is not set}"
export SQL_PLUGIN=postgres12
export SQL_HOST="${TEMPORAL_DB_HOST:-127.0.0.1}"
export SQL_PORT="${TEMPORAL_DB_PORT:-5432}"
export SQL_USER="${TEMPORAL_DB_USER:-temporal}"
export SQL_PASSWORD="$TEMPORAL_DB_PASSWORD"

for pair in temporal:temporal temporal_visibility:visibility; do
  database=${pair%%:*}
  schema=${pair#*:}
  "$SQL_TOOL" --plugin postgres12 --db "$database" setup-schema -v 0.0
  "$SQL_TOOL" --plugin postgres12 --db "$database" update-schema -d "$SCHEMA_DIR/postgresql/v12/$schema/versioned"
  echo "temporal-schema: $database is at the newest $schema schema of $SCHEMA_DIR"
done
