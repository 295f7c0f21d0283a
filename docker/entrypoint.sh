#!/bin/sh
# Runs a flashsale command (server, worker, channel, relay, reconcile ...) with the classpath the
# image was built with: the same as ./flashsale, without the build step.
set -eu
# JAVA_OPTS is split on spaces on purpose (several options in one variable)
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:-} -cp "$(cat /app/classpath.txt)" io.flashsale.launcher.FlashsaleApplication "$@"
