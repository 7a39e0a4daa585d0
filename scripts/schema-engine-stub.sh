#!/bin/sh
echo "schema engine stub: migrations run through scripts/migrate.ts" >&2
exit 1
