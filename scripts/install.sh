#!/usr/bin/env bash
# Builds `prefs` and `prefs-tls` for installation and installs them, with
# the bash, zsh and fish completions, under PREFIX:
#
#   scripts/install.sh [PREFIX]               build, then install (default /usr/local)
#   scripts/install.sh --build-only           build only
#   sudo scripts/install.sh --no-build [PREFIX]   install what was built, as root
#
# The build is a release build with the Swift runtime and Foundation linked
# in (`--static-swift-stdlib`, on Linux), so the binaries run on a machine
# without a Swift toolchain. It has a build directory of its own
# (.build/install): linking the runtime statically compiles every module with
# other flags, and sharing .build would rebuild everything at each switch.
# `prefs-tls`'s static link needs libcurl's development files (Debian and
# Ubuntu: libcurl4-openssl-dev; Fedora: libcurl-devel).
#
# Installed:
#   PREFIX/bin/prefs, PREFIX/bin/prefs-tls (prefs runs prefs-tls, found
#   beside it, for https etcd endpoints)
#   PREFIX/share/bash-completion/completions/prefs
#   PREFIX/share/zsh/site-functions/_prefs
#   PREFIX/share/fish/vendor_completions.d/prefs.fish
set -euo pipefail
cd "$(dirname "$0")/.."

build=true
copy=true
prefix=/usr/local
for argument in "$@"; do
    case $argument in
    --build-only) copy=false ;;
    --no-build) build=false ;;
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
flags=(-c release --scratch-path "$scratch")
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
    install -d "$prefix/bin"
    install -m 755 "$built/prefs" "$built/prefs-tls" "$prefix/bin/"
    echo "installed $prefix/bin/prefs and $prefix/bin/prefs-tls"
    for shell in bash zsh fish; do
        case $shell in
        bash) file="$prefix/share/bash-completion/completions/prefs" ;;
        zsh) file="$prefix/share/zsh/site-functions/_prefs" ;;
        fish) file="$prefix/share/fish/vendor_completions.d/prefs.fish" ;;
        esac
        install -d "$(dirname "$file")"
        "$prefix/bin/prefs" completions "$shell" >"$file"
        chmod 644 "$file"
        echo "installed $file"
    done
fi
