#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Adds bookworm-backports from the machine's own bookworm source: same mirror, same key, same
# format (a one-line "deb" list or a deb822 .sources file), so that packages come only from
# where this machine is configured to trust. Nothing is written when a bookworm-backports
# source is there already; without a bookworm source it fails and says so.
#   scripts/apt-backports.sh [APT_ETC]   (default /etc/apt; install-deps.sh runs it)
set -euo pipefail

etc=${1:-/etc/apt}
lists=()
[ -f "$etc/sources.list" ] && lists+=("$etc/sources.list")
for f in "$etc"/sources.list.d/*.list; do [ -f "$f" ] && lists+=("$f"); done
sources=()
for f in "$etc"/sources.list.d/*.sources; do [ -f "$f" ] && sources+=("$f"); done

# The first one-line "deb [options] URI SUITE ..." source whose suite is want, as "options|URI".
oneline_with() {
	awk -v want="$1" '
		/^[ \t]*deb[ \t]/ {
			s = $0; sub(/^[ \t]*deb[ \t]+/, "", s); opts = ""
			if (s ~ /^\[/) {
				opts = substr(s, 1, index(s, "]"))
				s = substr(s, index(s, "]") + 1); sub(/^[ \t]+/, "", s)
			}
			split(s, f, /[ \t]+/)
			if (f[2] == want) { print opts "|" f[1]; exit }
		}' "${lists[@]}" /dev/null
}

# The first enabled deb822 stanza of type deb whose Suites has want, as "URIs|Signed-By".
deb822_stanza_with() {
	awk -v want="$1" '
		function flush() {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no" &&
			    (" " suites " ") ~ ("[ \t]" want "[ \t]")) {
				print uris "|" signed; found = 1; exit
			}
			types = suites = uris = signed = enabled = ""
		}
		FNR == 1 && NR > 1 { flush() }
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		{
			key = tolower($1); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "types:") types = val
			else if (key == "suites:") suites = val
			else if (key == "uris:") uris = val
			else if (key == "signed-by:") signed = val
			else if (key == "enabled:") enabled = tolower(val)
		}
		END { if (!found) flush() }' "${sources[@]}" /dev/null
}

if [ -n "$(oneline_with bookworm-backports)" ] || [ -n "$(deb822_stanza_with bookworm-backports)" ]; then
	exit 0
fi

line=$(oneline_with bookworm)
if [ -n "$line" ]; then
	opts=${line%%|*}
	echo "deb ${opts:+$opts }${line#*|} bookworm-backports main" \
		>"$etc/sources.list.d/autoprof-backports.list"
	exit 0
fi

stanza=$(deb822_stanza_with bookworm)
if [ -n "$stanza" ]; then
	{
		echo "Types: deb"
		echo "URIs: ${stanza%%|*}"
		echo "Suites: bookworm-backports"
		echo "Components: main"
		[ -z "${stanza#*|}" ] || echo "Signed-By: ${stanza#*|}"
	} >"$etc/sources.list.d/autoprof-backports.sources"
	exit 0
fi

echo "apt-backports: no Debian bookworm source in $etc/sources.list or" \
	"$etc/sources.list.d/ (one-line 'deb URI bookworm ...' or deb822 'Suites: bookworm');" \
	"add your mirror's bookworm source, or a bookworm-backports one, and run again" >&2
exit 1
