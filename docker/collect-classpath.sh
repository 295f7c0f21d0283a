#!/bin/sh
# collect-classpath.sh MODULE_TARGET OUT
# Copies the module's jar (launcher, or devstack for the demo image) and every jar named in
# MODULE_TARGET/classpath.txt (written by `mvn install`,
# absolute paths into the Maven repository and the reactor modules) to OUT/lib, and writes
# OUT/classpath.txt: the same entries in the same order, pointing at the copies under /app/lib
# (where the runtime image puts OUT). Fails on a missing jar or two jars with one file name.
set -eu
target=$1
out=$2
prefix=${APP_LIB:-/app/lib}
mkdir -p "$out/lib"
module=$(basename "$(dirname "$target")")
set -- "$target"/"$module"-*.jar
if [ "$#" -ne 1 ] || [ ! -f "$1" ]; then
  echo "collect-classpath: expected one $module jar in $target, found: $*" >&2
  exit 1
fi
cp "$1" "$out/lib/"
classpath="$prefix/$(basename "$1")"
entries=$(tr ':' '\n' < "$target/classpath.txt")
for jar in $entries; do
  name=$(basename "$jar")
  if [ ! -f "$jar" ]; then
    echo "collect-classpath: missing $jar" >&2
    exit 1
  fi
  if [ -e "$out/lib/$name" ]; then
    echo "collect-classpath: two jars named $name" >&2
    exit 1
  fi
  cp "$jar" "$out/lib/$name"
  classpath="$classpath:$prefix/$name"
done
printf '%s\n' "$classpath" > "$out/classpath.txt"
echo "collect-classpath: $(ls "$out/lib" | wc -l) jars in $out/lib"
