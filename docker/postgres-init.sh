#!/bin/sh
# Mounted into /docker-entrypoint-initdb.d of the postgresql service: runs once, on the first start
# with an empty data directory (the postgresql-data volume). Creates
#   flashsale            role + database of the app (production.example.yml: database.user / url)
#   temporal             role owning temporal and temporal_visibility (Temporal's persistence and
#                        visibility stores; the temporal-schema service creates the schemas in them)
# The passwords come from the environment of the postgresql service. Changing them later needs
# ALTER ROLE by hand (or a new volume): this script does not run again.
# The file is executable, so the image runs it (were it sourced, `exit 1` would still stop the
# initialisation); no `set -u`.
: "${FLASHSALE_DB_PASSWORD:?FLASHSALE_DB_PASSWORD is not set}"
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is not set}"
# the roles keep these passwords: refuse .env.example's placeholders and short ones (32, as the
# service asks of its own secrets) before creating them
for name in POSTGRES_PASSWORD FLASHSALE_DB_PASSWORD TEMPORAL_DB_PASSWORD; do
  eval "value=\${$name:-}"
  case "$value" in
    change-me*|changeme*|password|postgres|secret)
      echo "$name is a placeholder ('$value'): set a real one, e.g. openssl rand -hex 32" >&2; exit 1 ;;
  esac
  [ "${#value}" -ge 32 ] || { echo "$name is shorter than 32 characters: e.g. openssl rand -hex 32" >&2; exit 1; }
done
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v flashsale_password="$FLASHSALE_DB_PASSWORD" \
  -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE flashsale LOGIN PASSWORD :'flashsale_password';
CREATE DATABASE flashsale OWNER flashsale;
CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
-- the visibility schema's indexes need btree_gin; create it as the superuser up front
\connect temporal_visibility
CREATE EXTENSION IF NOT EXISTS btree_gin;
SQL
