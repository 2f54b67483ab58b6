#!/usr/bin/env bash
# Builds `prefs` and `prefs-tls` for installation and installs them, with
# the manual page and the bash, zsh and fish completions, under PREFIX:
#
#   scripts/install.sh [PREFIX]               build, then install (default /usr/local)
#   scripts/install.sh --build-only           build only
#   sudo scripts/install.sh --no-build [PREFIX]   install what was built, as root
#   sudo scripts/install.sh --uninstall [PREFIX]  remove what it installed there
#
# The build is a release build with the Swift runtime and Foundation linked
# in (`--static-swift-stdlib`, on Linux), so the binaries run on a machine
# without a Swift toolchain. It has a build directory of its own
# (.build/install): linking the runtime statically compiles every module with
# other flags, and sharing .build would rebuild everything at each switch.
# `prefs-tls`'s static link needs libcurl's development files (Debian and
# Ubuntu: libcurl4-openssl-dev; Fedora: libcurl-devel).
#
# Installed (and removed by --uninstall, which leaves the directories, as
# `make uninstall` does: others may have made them, or use them):
#   PREFIX/bin/prefs, PREFIX/bin/prefs-tls (prefs runs prefs-tls, found
#   beside it, for https etcd endpoints)
#   PREFIX/share/man/man1/prefs.1 (written by `prefs help --man`)
#   PREFIX/share/bash-completion/completions/prefs
#   PREFIX/share/zsh/site-functions/_prefs
#   PREFIX/share/fish/vendor_completions.d/prefs.fish
#
# Packaging for another layout: DESTDIR=STAGE installs under STAGE/PREFIX,
# and ZSH_COMPLETIONS=DIR (relative to PREFIX) replaces share/zsh/site-functions
# (Debian: share/zsh/vendor-completions).
set -euo pipefail
cd "$(dirname "$0")/.."

build=true
copy=true
uninstall=false
prefix=/usr/local
for argument in "$@"; do
    case $argument in
    --build-only) copy=false ;;
    --no-build) build=false ;;
    --uninstall) uninstall=true build=false copy=false ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "install.sh: unknown option $argument (see --help)" >&2
        exit 2
        ;;
    *) prefix=$argument ;;
    esac
done

scratch=.build/install
products=(prefs prefs-tls)
root=${DESTDIR:-}$prefix
# Every file installed, relative to PREFIX, but the two programs.
manual=share/man/man1/prefs.1
completions=(
    bash:share/bash-completion/completions/prefs
    "zsh:${ZSH_COMPLETIONS:-share/zsh/site-functions}/_prefs"
    fish:share/fish/vendor_completions.d/prefs.fish
)

if $uninstall; then
    files=("bin/prefs" "bin/prefs-tls" "$manual")
    for entry in "${completions[@]}"; do files+=("${entry#*:}"); done
    for file in "${files[@]}"; do
        if [[ -e $root/$file || -L $root/$file ]]; then
            rm -f "$root/$file"
            echo "removed $root/$file"
        fi
    done
    exit 0
fi
# No $ORIGIN in the programs' library search path: with the runtime linked
# in they load only system libraries, from the system's directories.
flags=(-c release --scratch-path "$scratch" --disable-local-rpath)
if [[ $(uname -s) == Linux ]]; then
    # On macOS the Swift runtime is part of the system.
    flags+=(--static-swift-stdlib)
fi

if $build; then
    if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    for product in "${products[@]}"; do
        if ! swift build "${flags[@]}" --product "$product"; then
            echo "install.sh: building $product failed; if the linker cannot find -lcurl," \
                "install libcurl's development files (libcurl4-openssl-dev, libcurl-devel)" >&2
            exit 1
        fi
    done
fi

if $copy; then
    built="$scratch/release"
    for product in "${products[@]}"; do
        if [[ ! -x $built/$product ]]; then
            echo "install.sh: $built/$product is not built: run scripts/install.sh --build-only" >&2
            exit 1
        fi
    done
    install -d "$root/bin"
    install -m 755 "$built/prefs" "$built/prefs-tls" "$root/bin/"
    echo "installed $root/bin/prefs and $root/bin/prefs-tls"
    install -d "$root/$(dirname "$manual")"
    "$root/bin/prefs" help --man >"$root/$manual"
    chmod 644 "$root/$manual"
    echo "installed $root/$manual"
    for entry in "${completions[@]}"; do
        file=$root/${entry#*:}
        install -d "$(dirname "$file")"
        "$root/bin/prefs" completions "${entry%%:*}" >"$file"
        chmod 644 "$file"
        echo "installed $file"
    done
fi
