# SPDX-License-Identifier: GPL-2.0-or-later
# DTPLAN_WITH_SLURM
# -----------------
# --with-slurm[=PREFIX]: locate <slurm/spank.h>.  slurm.pc is optional
# upstream, so look for the header directly.  Sets have_slurm,
# SLURM_CPPFLAGS and slurm_plugindir; defines DTPLAN_SLURM_SYSCONFDIR.
AC_DEFUN([DTPLAN_WITH_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=PREFIX],
      [Slurm installation prefix holding include/slurm/spank.h (default: search the system)])],
    [], [with_slurm=check])
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR],
      [where to install spank_dtplan.so (default: LIBDIR/slurm)])],
    [slurm_plugindir=$withval], [slurm_plugindir='${libdir}/slurm'])
  AC_SUBST([slurm_plugindir])
  AC_ARG_WITH([slurm-sysconfdir],
    [AS_HELP_STRING([--with-slurm-sysconfdir=DIR],
      [Slurm's configuration folder when SLURM_CONF is unset, where relative site= and topology= paths point (default: /etc/slurm)])],
    [slurm_sysconfdir=$withval], [slurm_sysconfdir=/etc/slurm])
  AC_SUBST([slurm_sysconfdir])
  AC_DEFINE_UNQUOTED([DTPLAN_SLURM_SYSCONFDIR], ["$slurm_sysconfdir"],
    [Slurm's configuration folder when SLURM_CONF is unset.])
  have_slurm=no
  SLURM_CPPFLAGS=
  AS_IF([test "x$with_slurm" != xno], [
    AS_IF([test "x$with_slurm" != xyes && test "x$with_slurm" != xcheck],
      [SLURM_CPPFLAGS="-I$with_slurm/include"])
    save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
    AC_CHECK_HEADER([slurm/spank.h], [have_slurm=yes], [], [#include <stdint.h>])
    CPPFLAGS=$save_CPPFLAGS
    AS_IF([test "x$have_slurm" = xno && test "x$with_slurm" != xcheck],
      [AC_MSG_ERROR([slurm/spank.h not found under ${with_slurm}; install libslurm-dev or pass --with-slurm=PREFIX])])
    AS_IF([test "x$have_slurm" = xno],
      [AC_MSG_WARN([slurm/spank.h not found: the SPANK plugin will not be built (install libslurm-dev)])])
  ])
  AC_SUBST([SLURM_CPPFLAGS])
])
