#!/usr/bin/env bash
# nginx.sh: print the path of an nginx binary, for the test of the
# reverse-proxy configuration in docs/deploy/nginx.conf. Uses nginx on
# PATH, else unpacks Debian's nginx package into the cache (apt-get
# download and dpkg -x: no root, no service started, nothing installed
# system-wide).
#
# Usage: scripts/nginx.sh           find or unpack; print the path
#        scripts/nginx.sh --check   print the path if there is one, else exit 1
set -euo pipefail
KG_NAME=nginx
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

dir=$KGRAG_CACHE/nginx
if [[ -n ${KGRAG_NGINX:-} ]] && command -v "$KGRAG_NGINX"; then
	exit 0
fi
command -v nginx && exit 0
if [[ -x $dir/usr/sbin/nginx ]]; then
	echo "$dir/usr/sbin/nginx"
	exit 0
fi
[[ ${1:-} == --check ]] && exit 1
command -v apt-get >/dev/null || kg_die "no nginx, and no apt-get to fetch Debian's: install nginx and set KGRAG_NGINX"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kg_log "unpacking Debian's nginx into $dir (once)"
# apt-get download writes to the current folder; as root it warns that
# the _apt user cannot, which is harmless.
(cd "$tmp" && apt-get download -q nginx >&2 2>/dev/null) ||
	{ kg_log "apt-get download nginx failed; trying apt-get update first"; apt-get update -q >&2 && (cd "$tmp" && apt-get download -q nginx >&2); } ||
	kg_die "apt-get download nginx failed"
rm -rf "$dir.new"
mkdir -p "$dir.new"
dpkg -x "$tmp"/nginx_*.deb "$dir.new"
"$dir.new/usr/sbin/nginx" -v 2>&1 | grep -q nginx/ || kg_die "the unpacked nginx does not run: $("$dir.new/usr/sbin/nginx" -v 2>&1)"
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "$dir/usr/sbin/nginx"
