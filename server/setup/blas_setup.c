#include "server/setup/blas_setup.h"
#include "core/arch.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set by us before the re-exec, so a second generic pick is not retried. */
#define BLAS_SETUP_MARK "ATTENTION_BLAS_REEXEC"

void blas_setup_kernels(char **argv)
{
    const char *core = openblas_get_corename();
    if (getenv("OPENBLAS_CORETYPE") || getenv(BLAS_SETUP_MARK))
        return;
    if (strcmp(core, "Prescott") != 0 && strcmp(core, "Core2") != 0 &&
        strcmp(core, "Nehalem") != 0)
        return;
    if (arch_simd_cpu() < ARCH_SIMD_AVX2) /* x86-64 with AVX2 and FMA */
        return;
    /* Haswell kernels need AVX2+FMA only; SkylakeX's AVX-512 kernels are
     * not used, since this OpenBLAS predates several CPUs that have it. */
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    setenv(BLAS_SETUP_MARK, "1", 1);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the generic kernels */
}

void blas_setup_single_threaded(void) { openblas_set_num_threads(1); }

const char *blas_setup_corename(void) { return openblas_get_corename(); }
