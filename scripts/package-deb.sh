#!/usr/bin/env bash
# Builds the Debian package of the `prefs` command, prefs_VERSION_ARCH.deb,
# from the installed build (scripts/install.sh), with dpkg-deb:
#
#   scripts/package-deb.sh [OUTPUT_DIRECTORY]    build, then package (default .build/deb)
#   scripts/package-deb.sh --no-build [OUTPUT_DIRECTORY]   package what install.sh built
#
# It needs dpkg-dev (dpkg-shlibdeps) and, to build, what install.sh needs.
# The package holds:
#   /usr/bin/prefs, /usr/bin/prefs-tls        stripped, as Debian ships programs
#   /usr/share/man/man1/prefs.1.gz            `prefs help --man`, gzip -9n;
#   /usr/share/man/man1/prefs-tls.1.gz        a link to it (prefs-tls takes prefs's arguments)
#   /usr/share/bash-completion/completions/prefs
#   /usr/share/zsh/vendor-completions/_prefs
#   /usr/share/fish/vendor_completions.d/prefs.fish
#   /usr/share/doc/prefs/copyright            machine-readable (DEP-5), from LICENSE
#   /usr/share/doc/prefs/changelog.gz         CHANGELOG.md
#   /usr/share/doc/prefs/changelog.Debian.gz  one entry: this build
#
# Version: UPSTREAM-REVISION, UPSTREAM as `prefs --version` prints it (from
# PreferencesVersion.current) and REVISION $DEB_REVISION, default 1.
# Depends: what dpkg-shlibdeps finds the two programs load, and nothing else.
# Maintainer: "$DEBFULLNAME <$DEBEMAIL>", as dch takes it, else the
# repository's git user. Dates and file times are $SOURCE_DATE_EPOCH, else
# the last commit's, so the same tree packages to the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

build=true
output=.build/deb
for argument in "$@"; do
    case $argument in
    --no-build) build=false ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "package-deb.sh: unknown option $argument (see --help)" >&2
        exit 2
        ;;
    *) output=$argument ;;
    esac
done

for tool in dpkg-deb dpkg-shlibdeps; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "package-deb.sh: $tool is missing: install dpkg-dev" >&2
        exit 1
    fi
done
if $build; then
    scripts/install.sh --build-only
fi
built=.build/install/release
if [[ ! -x $built/prefs ]]; then
    echo "package-deb.sh: $built/prefs is not built: run scripts/install.sh --build-only" >&2
    exit 1
fi

upstream=$("$built/prefs" --version)
upstream=${upstream#prefs }
version=$upstream-${DEB_REVISION:-1}
architecture=$(dpkg --print-architecture)
name=${DEBFULLNAME:-$(git config user.name || true)}
email=${DEBEMAIL:-$(git config user.email || true)}
if [[ -z $name || -z $email ]]; then
    echo "package-deb.sh: no maintainer: set DEBFULLNAME and DEBEMAIL" >&2
    exit 1
fi
maintainer="$name <$email>"
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH=$epoch

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The layout dpkg-shlibdeps expects: the package's tree in debian/prefs
# beside a debian/control naming it.
root=$stage/debian/prefs
umask 022
mkdir -p "$root"
DESTDIR=$root ZSH_COMPLETIONS=share/zsh/vendor-completions \
    scripts/install.sh --no-build /usr >/dev/null

strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    "$root/usr/bin/prefs" "$root/usr/bin/prefs-tls"
man=$root/usr/share/man/man1
gzip -9n "$man/prefs.1"
ln -s prefs.1.gz "$man/prefs-tls.1.gz"

doc=$root/usr/share/doc/prefs
mkdir -p "$doc"
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: Preferences"
    echo
    echo "Files: *"
    echo "Copyright: $(sed -n 's/^Copyright (c) //p' LICENSE)"
    echo "License: Expat"
    echo
    echo "License: Expat"
    # The license text after its title and copyright line, as DEP-5 wants
    # it: each line indented by one space, an empty line as " .".
    sed '1,/^Copyright/d' LICENSE | sed '/./,$!d' | sed 's/^$/./; s/^/ /'
} >"$doc/copyright"
gzip -9n <CHANGELOG.md >"$doc/changelog.gz"
{
    echo "prefs ($version) unstable; urgency=medium"
    echo
    echo "  * Packaged from the Preferences source tree at version $upstream;"
    echo "    /usr/share/doc/prefs/changelog.gz says what it changed."
    echo
    echo " -- $maintainer  $(date -u -R -d "@$epoch")"
} | gzip -9n >"$doc/changelog.Debian.gz"

printf 'Source: prefs\n\nPackage: prefs\nArchitecture: any\n' >"$stage/debian/control"
mkdir -p "$root/DEBIAN"
depends=$(cd "$stage" &&
    dpkg-shlibdeps -O debian/prefs/usr/bin/prefs debian/prefs/usr/bin/prefs-tls |
    sed -n 's/^shlibs:Depends=//p')
if [[ -z $depends ]]; then
    echo "package-deb.sh: dpkg-shlibdeps found no libraries the programs load" >&2
    exit 1
fi

cat >"$root/DEBIAN/control" <<EOF
Package: prefs
Version: $version
Architecture: $architecture
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: admin
Priority: optional
Description: read and change Preferences settings stores from the shell
 The prefs command reads and changes the settings files that services
 built with the Preferences Swift library read, while they run: it takes
 the same lock, writes durably, and records who changed each key.
 .
 It keeps a numbered history with undo (log, revert, restore), applies
 reviewed files (diff, apply), edits in an editor with a three-way merge,
 watches changes, and works on stores kept in etcd as on files.
EOF

(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
find "$root" -exec touch --no-dereference -d "@$epoch" {} +
chmod -R u+rwX,go+rX,go-w "$root"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
mkdir -p "$output"
package=$output/prefs_${version}_$architecture.deb
# xz at its fastest level: 23 MB instead of 19.5 at the default level,
# in a fifth of the time (11 s of CPU instead of 53).
dpkg-deb --root-owner-group -Zxz -z1 --build "$root" "$package" >/dev/null
echo "$package"
