#!/bin/bash
# The library as another project uses it: `cmake --install` into a fresh prefix, then
#  1. the headers, liberofs-kit.so, erofs-kit.pc and the CMake package are there; the library
#     exports the API's symbols only (the layers inside it stay hidden);
#  2. examples/ configured with find_package(erofs-kit) against that prefix, built, and run: the
#     C program builds an image from entries made in code and reads it back, the C++ one builds
#     an image of a tree and compares every file; both images pass `erofs fsck` (and, as root
#     with loop devices, mount in the kernel and match);
#  3. the C example built a second way, with pkg-config and the C compiler alone, and run;
#  4. the public headers compile on their own as strict C99 and as C++17.
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd cmake cc c++ pkg-config nm python3
workdir
BUILD=$(cd "$(dirname "$EROFS")" && pwd)
PREFIX=$WORKDIR/prefix
EXAMPLES=$EROFS_SOURCE_DIR/examples

check "cmake --install" cmake --install "$BUILD" --prefix "$PREFIX"
lib=$(find "$PREFIX" -name 'liberofs-kit.so' | head -1)
pc=$(find "$PREFIX" -name 'erofs-kit.pc' | head -1)
check "installed files" test -f "$PREFIX/include/erofs-kit/erofs.h" -a -f "$PREFIX/include/erofs-kit/erofs.hpp" \
    -a -n "$lib" -a -n "$pc" -a -f "$(dirname "$lib")/cmake/erofs-kit/erofs-kit-config.cmake" \
    -a -x "$PREFIX/bin/erofs"
libdir=$(dirname "$lib")

# Every exported symbol belongs to the API (C functions, erofs::Image*, erofs::ImageBuilder*) or
# is one of the standard library's weak template instances.
exported_api_only() {
    local stray
    stray=$(nm -DC --defined-only "$lib" | awk '{ $1 = ""; $2 = ""; print }' | sed 's/^ *//' |
        grep -Ev '^(erofs_[a-z_]+|erofs::(Image|ImageBuilder)::.*|(typeinfo|typeinfo name|vtable) for std::.*|std::.*)$' || true)
    [[ -z $stray ]] || { echo "exported beyond the API: $stray" | head -5; return 1; }
    nm -D --defined-only "$lib" | grep ' T erofs_image_open$' >/dev/null
}
check "only the API is exported" exported_api_only

check "configure examples/ against the installed package" \
    cmake -S "$EXAMPLES" -B "$WORKDIR/examples" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release
check "build examples/" cmake --build "$WORKDIR/examples"
check_output "C example builds and reads back an image" 0 'hello from erofs-kit' \
    "$WORKDIR/examples/build_and_read_c" "$WORKDIR/c.img"
mktree "$WORKDIR/tree" small >/dev/null
check_output "C++ example builds a tree and reads every file back" 0 'every file reads back the same' \
    "$WORKDIR/examples/build_and_read_cpp" "$WORKDIR/tree" "$WORKDIR/cpp.img"
check_output "fsck of the C example's image" 0 clean "$EROFS" fsck "$WORKDIR/c.img"
check_output "fsck of the C++ example's image" 0 clean "$EROFS" fsck "$WORKDIR/cpp.img"

if have_root && have_loop && have_erofs_kernel; then
    if check "mount the C++ example's image" mount_image "$WORKDIR/cpp.img" "$WORKDIR/mnt"; then
        check_output "kernel view equals the tree" 0 ' 0 differences$' \
            treecmp "$WORKDIR/tree" "$WORKDIR/mnt" --limit 20
        umount_image "$WORKDIR/mnt"
    fi
else
    skip_section "kernel mount of the C++ example's image: needs root, loop devices and erofs in the kernel"
fi

check "C example with pkg-config" bash -c "PKG_CONFIG_PATH='$(dirname "$pc")' cc -std=c99 -Wall -Wextra -Werror \
    '$EXAMPLES/build_and_read.c' \$(PKG_CONFIG_PATH='$(dirname "$pc")' pkg-config --cflags --libs erofs-kit) \
    -o '$WORKDIR/c_pkgconfig'"
check_output "pkg-config-built C example runs" 0 'hello from erofs-kit' \
    env LD_LIBRARY_PATH="$libdir" "$WORKDIR/c_pkgconfig" "$WORKDIR/c2.img"
check "identical images from both C builds" cmp "$WORKDIR/c.img" "$WORKDIR/c2.img"

check "erofs.h is strict C99" bash -c "echo '#include <erofs-kit/erofs.h>' |
    cc -std=c99 -pedantic -Wall -Wextra -Werror -I'$PREFIX/include' -x c -fsyntax-only -"
check "erofs.hpp is C++17" bash -c "echo '#include <erofs-kit/erofs.hpp>' |
    c++ -std=c++17 -pedantic -Wall -Wextra -Werror -I'$PREFIX/include' -x c++ -fsyntax-only -"
finish
