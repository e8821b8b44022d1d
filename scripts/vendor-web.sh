#!/usr/bin/env bash
# vendor-web.sh: fetch the graph-drawing library kgrag serve's web page
# uses (cytoscape, MIT) from the npm registry at a pinned version and
# integrity, and copy its minified build and licence into
# internal/serve/web/vendor, which go:embed puts in the binary. The page
# loads nothing from a CDN. Run it only to change the version; the files
# are committed.
#
# Usage: scripts/vendor-web.sh
set -euo pipefail
KG_NAME=vendor-web
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

NAME=cytoscape
VERSION=3.35.0
INTEGRITY=sha512-sMvBIXiGMnhkCaWz2R06FwF/27MNlS+Tqvi17foO9UhnUg3XGZccKjxsvEqQFAQYMSSZmN5SxYzUYlQ0DOJJ3g==
DEST=$KGRAG_REPO/internal/serve/web/vendor

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$NAME@$VERSION" >/dev/null) || kg_die "npm pack $NAME@$VERSION failed"
tgz=$tmp/$NAME-$VERSION.tgz
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
[[ $got == "$INTEGRITY" ]] || kg_die "$NAME@$VERSION: integrity $got, want $INTEGRITY"
tar -xzf "$tgz" -C "$tmp"
rm -rf "$DEST"
mkdir -p "$DEST"
cp "$tmp/package/dist/$NAME.min.js" "$DEST/$NAME.min.js"
cp "$tmp/package/LICENSE" "$DEST/$NAME.LICENSE"
printf '%s %s %s\n' "$NAME" "$VERSION" "$INTEGRITY" >"$DEST/VERSIONS"
kg_log "vendored $NAME $VERSION into $DEST"
