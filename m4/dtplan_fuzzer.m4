# SPDX-License-Identifier: GPL-2.0-or-later
# DTPLAN_WITH_FUZZER
# ------------------
# The libFuzzer harnesses (fuzz/) are built by `make fuzz` with a clang that
# links -fsanitize=fuzzer,address,undefined: FUZZ_CC, default the first of
# clang, clang-18 ... clang-14 that does.  Without one, `make fuzz` says so
# and does nothing; --enable-fuzzing makes its absence an error,
# --disable-fuzzing skips the check.  Sets have_fuzzer and FUZZ_CC.
AC_DEFUN([DTPLAN_WITH_FUZZER], [
  AC_ARG_VAR([FUZZ_CC], [clang with libFuzzer for make fuzz (default: clang)])
  AC_ARG_ENABLE([fuzzing],
    [AS_HELP_STRING([--enable-fuzzing],
      [require a clang with libFuzzer for make fuzz (default: use one when found)])],
    [], [enable_fuzzing=auto])
  have_fuzzer=no
  AS_IF([test "x$enable_fuzzing" != xno], [
    AS_IF([test -z "$FUZZ_CC"], [fuzz_candidates="clang clang-18 clang-17 clang-16 clang-15 clang-14"],
      [fuzz_candidates=$FUZZ_CC])
    AC_MSG_CHECKING([for a C compiler with libFuzzer, AddressSanitizer and UBSan])
    cat >conftest_fuzz.c <<_DTPLAN_EOF
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return data == NULL && size > 0; }
_DTPLAN_EOF
    for fuzz_cc in $fuzz_candidates; do
      AS_IF([$fuzz_cc -fsanitize=fuzzer,address,undefined conftest_fuzz.c \
               -o conftest_fuzz$EXEEXT >&AS_MESSAGE_LOG_FD 2>&1],
        [have_fuzzer=yes; FUZZ_CC=$fuzz_cc; break])
    done
    rm -f conftest_fuzz.c conftest_fuzz$EXEEXT
    AS_IF([test "x$have_fuzzer" = xyes], [AC_MSG_RESULT([$FUZZ_CC])], [AC_MSG_RESULT([no])])
    AS_IF([test "x$have_fuzzer" = xno && test "x$enable_fuzzing" = xyes],
      [AC_MSG_ERROR([--enable-fuzzing: no clang links -fsanitize=fuzzer,address,undefined (set FUZZ_CC)])])
  ])
  AC_SUBST([FUZZ_CC])
])
